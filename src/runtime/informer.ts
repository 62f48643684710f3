import type { KubernetesObject } from '@kubernetes/client-node';
import type { ApiStatus } from '../kube/api-error.js';
import { KubeApiError, isGone } from '../kube/api-error.js';
import { Backoff, DEFAULT_WATCH_BACKOFF } from './backoff.js';
import type { BackoffOptions } from './backoff.js';
import { IndexedCache } from './indexed-cache.js';
import type { IndexFunc } from '../kube/indexes.js';
import type { ListWatchSource, SelectorOptions, WatchEvent } from '../kube/list-watch.js';
import { silentLogger } from './logger.js';
import type { Logger } from './logger.js';
import { objectKey } from './object-key.js';
import { diffRelist } from './relist-diff.js';
import { monotonicNow, sleep } from './timing.js';

export interface EventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(old: T, current: T): void;
  /** On a delete seen only by a relist, `obj` is the last state the cache held. */
  onDelete?(obj: T): void;
}

export interface InformerOptions<T> extends SelectorOptions {
  source: ListWatchSource<T>;
  /** For logs, e.g. the resource path. */
  name?: string;
  logger?: Logger;
  /**
   * Asked of the server, which ends each watch after this long (sending a bookmark just before).
   * Default: 60–120 s, random per watch. client-go takes 5–10 min; shorter here because an idle watch
   * gets no bookmark until just before its end (seen on kube-apiserver 1.35), so this bounds how long a
   * silently dead connection goes unnoticed. Re-watching is cheap: it resumes from the resourceVersion.
   */
  watchTimeoutSeconds?: number;
  /**
   * No event and no bookmark for this long: the watch is taken as silently stalled and opened anew.
   * Default: the watch's timeout plus 30 s, past which a live server has certainly ended it.
   */
  stallTimeoutMs?: number;
  /** Between failed attempts (list failed, watch broke). */
  backoff?: BackoffOptions;
  /**
   * Applied to every object before it is cached or handed to handlers (listed ones as each page arrives):
   * controller-runtime's cache transform, to drop what no reader needs (see `stripForCache`). Must return an
   * object with the same key and resourceVersion.
   */
  transform?: (obj: T) => T;
}

/** Why one watch ended, when it did not fail. */
type WatchOutcome = 'closed' | 'expired' | 'stalled' | 'stopped' | 'relist';

const MIN_WATCH_TIMEOUT_SECONDS = 60;
const STALL_GRACE_MS = 30_000;
/** A watch that the server ends sooner than this without sending anything counts as a failure. */
const SHORT_WATCH_MS = 1_000;

function randomWatchTimeoutSeconds(): number {
  return Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + Math.random()));
}

/**
 * A supervised list+watch of one kind with a cache, indexes and event handlers: client-go's
 * reflector + indexer + shared informer, minus the delta FIFO.
 *
 * Recovery: a 410 Gone (expired resourceVersion) relists at once; a failed list or a broken watch
 * (network error, API server restart) retries with backoff and relists; a watch silent for
 * `stallTimeoutMs` is reopened. A relist is diffed against the cache, and the differences are delivered
 * as add/update/delete events, so nothing that changed while disconnected is lost.
 */
export class Informer<T extends KubernetesObject> {
  readonly name: string;
  private readonly cache = new IndexedCache<T>();
  private readonly handlers = new Set<EventHandler<T>>();
  private readonly backoff: Backoff;
  private readonly logger: Logger;
  private resourceVersion = '';
  private synced = false;
  private readonly syncWaiters = new Set<Waiter>();
  /** Callers of relistNow() whose list has not been sent yet. */
  private readonly relistWaiters = new Set<Waiter>();
  /** Ends the watch in progress so that the run loop lists again. */
  private interruptWatch?: () => void;
  private lifetime?: AbortController;
  private running?: Promise<void>;

  constructor(private readonly options: InformerOptions<T>) {
    this.name = options.name ?? 'informer';
    this.backoff = new Backoff(options.backoff ?? DEFAULT_WATCH_BACKOFF);
    this.logger = (options.logger ?? silentLogger).child({ informer: this.name });
  }

  start(): void {
    if (this.lifetime) {
      throw new Error(`informer ${this.name} was already started`);
    }
    this.lifetime = new AbortController();
    this.running = this.run(this.lifetime.signal);
  }

  async stop(): Promise<void> {
    this.lifetime?.abort();
    await this.running;
    this.rejectSyncWaiters(new Error(`informer ${this.name} stopped before it synced`));
    this.rejectRelistWaiters(new Error(`informer ${this.name} stopped before it listed again`));
  }

  /**
   * Lists again and resolves once a list sent after this call has been applied to the cache (retrying, with
   * backoff, until one succeeds): the cache then holds every change the API server had made before the call.
   * A watch can lag behind the API server for as long as its connection is slow or cut; a new leader calls
   * this so that it never decides from a cache older than what the previous leader already acted on.
   */
  relistNow(signal?: AbortSignal): Promise<void> {
    if (!this.lifetime || this.lifetime.signal.aborted) {
      return Promise.reject(new Error(`informer ${this.name} is not running`));
    }
    const listed = waitIn(
      this.relistWaiters,
      signal,
      `waiting for informer ${this.name} to list again was aborted`,
    );
    this.interruptWatch?.();
    return listed;
  }

  /** True once the first list has been applied to the cache. */
  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) {
      return Promise.resolve();
    }
    if (this.lifetime?.signal.aborted) {
      return Promise.reject(new Error(`informer ${this.name} is stopped`));
    }
    return waitIn(this.syncWaiters, signal, `waiting for informer ${this.name} to sync was aborted`);
  }

  /** The resourceVersion of the last list, event or bookmark applied. */
  lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  /** By `namespace/name` (or `name` for cluster-scoped kinds). */
  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  keys(): string[] {
    return this.cache.keys();
  }

  list(namespace?: string): T[] {
    const all = this.cache.list();
    return namespace === undefined ? all : all.filter((obj) => obj.metadata?.namespace === namespace);
  }

  addIndex(name: string, indexFunc: IndexFunc<T>): void {
    this.cache.addIndex(name, indexFunc);
  }

  byIndex(name: string, value: string): T[] {
    return this.cache.byIndex(name, value);
  }

  /**
   * Registers handlers and, as client-go does, replays every cached object to them as an add, so a
   * handler added late misses nothing. Returns a function that removes them.
   */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.handlers.add(handler);
    for (const obj of this.cache.list()) {
      this.notify(handler, (h) => h.onAdd?.(obj));
    }
    return () => this.handlers.delete(handler);
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.relist(signal);
        await this.watchUntilRelistNeeded(signal);
      } catch (err) {
        if (signal.aborted) {
          break;
        }
        const delay = this.backoff.next();
        this.logger.warn({ err, retryInMs: Math.round(delay) }, 'list/watch failed; relisting after backoff');
        await sleep(delay, signal);
      }
    }
  }

  private async relist(signal: AbortSignal): Promise<void> {
    // Only the callers waiting before this list is sent are answered by it.
    const answered = [...this.relistWaiters];
    this.relistWaiters.clear();
    try {
      await this.listIntoCache(signal);
    } catch (err) {
      answered.forEach((waiter) => this.relistWaiters.add(waiter));
      throw err;
    }
    if (!signal.aborted) answered.forEach((waiter) => waiter.resolve());
  }

  private async listIntoCache(signal: AbortSignal): Promise<void> {
    const { labelSelector, fieldSelector, transform } = this.options;
    const { items, resourceVersion } = await this.options.source.list({
      labelSelector,
      fieldSelector,
      signal,
      ...(transform ? { transform } : {}),
    });
    if (signal.aborted) {
      return;
    }
    const diff = diffRelist(this.cache.view(), items);
    for (const obj of diff.deleted) {
      this.cache.delete(objectKey(obj));
      this.dispatch((h) => h.onDelete?.(obj));
    }
    for (const obj of diff.added) {
      this.cache.upsert(objectKey(obj), obj);
      this.dispatch((h) => h.onAdd?.(obj));
    }
    for (const { old, current } of diff.updated) {
      this.cache.upsert(objectKey(current), current);
      this.dispatch((h) => h.onUpdate?.(old, current));
    }
    this.resourceVersion = resourceVersion;
    this.logger.debug(
      {
        resourceVersion,
        added: diff.added.length,
        updated: diff.updated.length,
        deleted: diff.deleted.length,
      },
      'listed',
    );
    this.markSynced();
  }

  /** Watches from the last resourceVersion, re-watching after normal ends and stalls; returns on 410. */
  private async watchUntilRelistNeeded(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && this.relistWaiters.size === 0) {
      const outcome = await this.watchOnce(signal);
      if (outcome === 'relist') return;
      if (outcome === 'expired') {
        this.logger.info(
          { resourceVersion: this.resourceVersion },
          'resourceVersion expired (410); relisting',
        );
        return;
      }
      if (outcome === 'stalled') {
        this.logger.warn({ resourceVersion: this.resourceVersion }, 'watch silent too long; reopening it');
      }
    }
  }

  /** One watch request; resolves with why it ended, rejects when it failed. */
  private watchOnce(signal: AbortSignal): Promise<WatchOutcome> {
    const { labelSelector, fieldSelector } = this.options;
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? randomWatchTimeoutSeconds();
    const stallTimeoutMs = this.options.stallTimeoutMs ?? timeoutSeconds * 1000 + STALL_GRACE_MS;
    const startedAt = monotonicNow();
    let received = 0;
    return new Promise((resolve, reject) => {
      let settled = false;
      let stallTimer: NodeJS.Timeout | undefined;
      const finish = (settle: () => void): void => {
        if (settled) {
          return;
        }
        settled = true;
        clearTimeout(stallTimer);
        signal.removeEventListener('abort', onAbort);
        stopWatch();
        settle();
      };
      const armStallTimer = (): void => {
        clearTimeout(stallTimer);
        stallTimer = setTimeout(() => finish(() => resolve('stalled')), stallTimeoutMs);
      };
      const onAbort = (): void => finish(() => resolve('stopped'));
      this.interruptWatch = () => finish(() => resolve('relist'));
      const stopWatch = this.options.source.watch(
        {
          resourceVersion: this.resourceVersion,
          timeoutSeconds,
          allowWatchBookmarks: true,
          labelSelector,
          fieldSelector,
        },
        {
          onEvent: (event) => {
            if (settled) {
              return;
            }
            received += 1;
            armStallTimer();
            if (event.type === 'ERROR') {
              const error = KubeApiError.fromStatus(event.object as ApiStatus);
              finish(() => (isGone(error) ? resolve('expired') : reject(error)));
              return;
            }
            this.applyWatchEvent(event);
            this.backoff.reset();
          },
          onClose: (error) => {
            if (isGone(error)) {
              finish(() => resolve('expired'));
            } else if (error !== undefined) {
              finish(() => reject(error));
            } else if (received === 0 && monotonicNow() - startedAt < SHORT_WATCH_MS) {
              finish(() => reject(new Error('watch ended at once without any event')));
            } else {
              finish(() => resolve('closed'));
            }
          },
        },
      );
      signal.addEventListener('abort', onAbort, { once: true });
      armStallTimer();
    });
  }

  private applyWatchEvent(event: Exclude<WatchEvent<T>, { type: 'ERROR' }>): void {
    const resourceVersion = event.object.metadata?.resourceVersion;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const obj = this.transformed(event.object);
        const old = this.cache.upsert(objectKey(obj), obj);
        this.dispatch((h) => (old === undefined ? h.onAdd?.(obj) : h.onUpdate?.(old, obj)));
        break;
      }
      case 'DELETED': {
        const obj = this.transformed(event.object);
        this.cache.delete(objectKey(obj));
        this.dispatch((h) => h.onDelete?.(obj));
        break;
      }
      case 'BOOKMARK':
        break;
    }
    if (resourceVersion) {
      this.resourceVersion = resourceVersion;
    }
  }

  private transformed(obj: T): T {
    return this.options.transform ? this.options.transform(obj) : obj;
  }

  private dispatch(call: (handler: EventHandler<T>) => void): void {
    for (const handler of this.handlers) {
      this.notify(handler, call);
    }
  }

  /** A handler that throws is logged; it never stops the informer nor the other handlers. */
  private notify(handler: EventHandler<T>, call: (handler: EventHandler<T>) => void): void {
    try {
      call(handler);
    } catch (err) {
      this.logger.error({ err }, 'event handler threw');
    }
  }

  private markSynced(): void {
    this.synced = true;
    for (const waiter of this.syncWaiters) {
      waiter.resolve();
    }
    this.syncWaiters.clear();
  }

  private rejectRelistWaiters(error: Error): void {
    rejectAll(this.relistWaiters, error);
  }

  private rejectSyncWaiters(error: Error): void {
    rejectAll(this.syncWaiters, error);
  }
}

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/** A promise settled through a waiter kept in `waiters`; it leaves them, rejected, when `signal` aborts. */
function waitIn(waiters: Set<Waiter>, signal: AbortSignal | undefined, abortMessage: string): Promise<void> {
  if (signal?.aborted) return Promise.reject(new Error(abortMessage));
  return new Promise((resolve, reject) => {
    const waiter: Waiter = {
      resolve: () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      reject: (err) => {
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      },
    };
    const onAbort = (): void => {
      waiters.delete(waiter);
      reject(new Error(abortMessage));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    waiters.add(waiter);
  });
}

function rejectAll(waiters: Set<Waiter>, error: Error): void {
  for (const waiter of waiters) waiter.reject(error);
  waiters.clear();
}
