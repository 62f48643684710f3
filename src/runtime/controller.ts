import type { KubernetesObject } from '@kubernetes/client-node';
import type { Registry as MetricsRegistry } from 'prom-client';
import { ControllerMetrics } from './controller-metrics.js';
import type { Informer } from './informer.js';
import { silentLogger } from './logger.js';
import type { Logger } from './logger.js';
import { objectKey } from './object-key.js';
import type { RateLimiter } from './rate-limiter.js';
import { defaultControllerRateLimiter } from './rate-limiter.js';
import { sleep } from './timing.js';
import { WorkQueue } from './workqueue.js';

export interface ReconcileResult {
  /** Reconcile this key again after so many milliseconds (the backoff is reset). */
  requeueAfter?: number;
  /** Reconcile this key again, with the rate limiter's backoff. */
  requeue?: boolean;
}

/**
 * Brings the object with `key` (`namespace/name`) to its desired state. A thrown error retries it with
 * backoff (except a TerminalError). `signal` aborts when the controller's shutdown deadline passes.
 */
// Returning nothing means success, so `async (key) => { ... }` is a valid reconciler.
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type
type ReconcileReturn = ReconcileResult | void;
export type Reconciler = (key: string, signal: AbortSignal) => Promise<ReconcileReturn> | ReconcileReturn;

/** A reconcile error that retrying cannot fix: counted and logged, never requeued (controller-runtime's). */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/** Something a controller watches besides its primary kind, and how its events map to primary keys. */
export interface WatchSource {
  waitForSync(signal?: AbortSignal): Promise<void>;
  /** Calls `enqueue` for every key to reconcile on each event; returns the unsubscribe function. */
  subscribe(enqueue: (key: string) => void): () => void;
}

/**
 * Watches `informer` and reconciles the keys `map` derives from each changed object (from both the old
 * and the new state of an update, each key once), as controller-runtime's EnqueueRequestsFromMapFunc.
 */
export function watchesMapped<T extends KubernetesObject>(
  informer: Informer<T>,
  map: (obj: T) => string[],
): WatchSource {
  return {
    waitForSync: (signal) => informer.waitForSync(signal),
    subscribe: (enqueue) => {
      const enqueueAll = (...objects: T[]): void =>
        new Set(objects.flatMap(map)).forEach((key) => enqueue(key));
      return informer.addEventHandler({
        onAdd: (obj) => enqueueAll(obj),
        onUpdate: (old, current) => enqueueAll(old, current),
        onDelete: (obj) => enqueueAll(obj),
      });
    },
  };
}

/** controller-runtime's EnqueueRequestForObject: the object's own key. */
function watchesSelf<T extends KubernetesObject>(informer: Informer<T>): WatchSource {
  return watchesMapped(informer, (obj) => [objectKey(obj)]);
}

export interface ControllerOptions<T extends KubernetesObject> {
  name: string;
  /** The primary kind: its keys are what `reconcile` gets, and what a resync re-enqueues. */
  for: Informer<T>;
  watches?: WatchSource[];
  reconcile: Reconciler;
  registry: MetricsRegistry;
  logger?: Logger;
  /** Workers reconciling at once (never two on one key). Default 1. */
  maxConcurrentReconciles?: number;
  /** Every key of `for` is enqueued again this often (±10%). Default 10 h, as controller-runtime's SyncPeriod. */
  resyncPeriodMs?: number;
  /** How long `stop` waits for reconciles in flight before aborting their signal. Default 30 s. */
  shutdownTimeoutMs?: number;
  /** A new limiter for each start. Default: controller-runtime's (5ms–1000s per key, 10 qps burst 100). */
  rateLimiter?: () => RateLimiter;
}

const DEFAULT_RESYNC_PERIOD_MS = 10 * 60 * 60 * 1000;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;
const RESYNC_JITTER = 0.1;

/** Whether `promise` settles within `timeoutMs`. */
async function settlesWithin(promise: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  if (timeoutMs <= 0) {
    return false;
  }
  const timer = new AbortController();
  const settled = await Promise.race([
    promise.then(() => true),
    sleep(timeoutMs, timer.signal).then(() => false),
  ]);
  timer.abort();
  return settled;
}

/** One running period of the controller: from `start` to `stop`. */
interface Run {
  queue: WorkQueue;
  unsubscribers: (() => void)[];
  resyncTimer?: NodeJS.Timeout;
  /** Aborted when the shutdown deadline passes; reconciles see it. */
  reconcileAbort: AbortController;
  /** Aborts a start still waiting for the caches. */
  startAbort: AbortController;
  workers: Promise<void>[];
  /** Reconciles in flight. */
  active: number;
}

/**
 * controller-runtime's controller: informer events → de-duplicated, rate-limited work queue → N workers
 * calling `reconcile`, with periodic resync and graceful shutdown. Can be started again after `stop`
 * (a new term of leadership).
 */
export class Controller<T extends KubernetesObject> {
  readonly name: string;
  private readonly metrics: ControllerMetrics;
  private readonly logger: Logger;
  private readonly workerCount: number;
  private run?: Run;
  /** Workers of the previous run that outlived its shutdown deadline; a new run waits for them. */
  private previousWorkers: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ControllerOptions<T>) {
    this.name = options.name;
    this.workerCount = options.maxConcurrentReconciles ?? 1;
    if (!Number.isInteger(this.workerCount) || this.workerCount < 1) {
      throw new Error('maxConcurrentReconciles must be a positive integer');
    }
    this.metrics = new ControllerMetrics(options.registry, options.name);
    this.metrics.setMaxConcurrentReconciles(this.workerCount);
    this.logger = (options.logger ?? silentLogger).child({ controller: options.name });
  }

  isRunning(): boolean {
    return this.run !== undefined;
  }

  /** Waits for the caches to sync, then starts the workers and the resync timer. */
  async start(): Promise<void> {
    if (this.run) {
      throw new Error(`controller ${this.name} is already running`);
    }
    const run: Run = {
      queue: new WorkQueue({
        name: this.name,
        registry: this.options.registry,
        rateLimiter: (this.options.rateLimiter ?? defaultControllerRateLimiter)(),
      }),
      unsubscribers: [],
      reconcileAbort: new AbortController(),
      startAbort: new AbortController(),
      workers: [],
      active: 0,
    };
    this.run = run;
    const sources = [watchesSelf(this.options.for), ...(this.options.watches ?? [])];
    try {
      await Promise.all([
        this.previousWorkers,
        ...sources.map((source) => source.waitForSync(run.startAbort.signal)),
      ]);
    } catch (err) {
      if (run.startAbort.signal.aborted) {
        return; // stopped while waiting
      }
      this.run = undefined;
      run.queue.shutDown();
      throw err;
    }
    if (run.startAbort.signal.aborted) {
      return;
    }
    run.unsubscribers = sources.map((source) => source.subscribe((key) => run.queue.add(key)));
    this.scheduleResync(run);
    run.workers = Array.from({ length: this.workerCount }, () => this.work(run));
    this.logger.info({ workers: this.workerCount }, 'controller started');
  }

  /** Enqueues `key` from outside the watched events (e.g. a drift check); ignored while stopped. */
  enqueue(key: string): void {
    this.run?.queue.add(key);
  }

  /**
   * Stops taking keys, lets reconciles in flight finish for up to `timeoutMs`, then aborts their signal
   * and resolves (without waiting further: a reconcile cannot be killed, but the next start waits for it).
   */
  async stop(timeoutMs = this.options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS): Promise<void> {
    const run = this.run;
    if (!run) {
      return;
    }
    this.run = undefined;
    run.startAbort.abort();
    run.unsubscribers.forEach((unsubscribe) => unsubscribe());
    clearTimeout(run.resyncTimer);
    run.queue.shutDown();
    const workersDone = Promise.all(run.workers);
    // Chained: a run stopped while it still waited for an earlier run's workers has none of its own, and
    // those earlier workers may still be reconciling (stop/start/stop/start around a hanging reconcile).
    this.previousWorkers = Promise.all([this.previousWorkers, workersDone]);
    const finished = run.active === 0 || (await settlesWithin(workersDone, timeoutMs));
    if (!finished) {
      this.logger.warn(
        { timeoutMs },
        'reconciles still running at the shutdown deadline; aborting their signal',
      );
      run.reconcileAbort.abort();
    }
    this.logger.info('controller stopped');
  }

  private scheduleResync(run: Run): void {
    const period = this.options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS;
    run.resyncTimer = setTimeout(
      () => {
        const keys = this.options.for.keys();
        this.logger.debug({ keys: keys.length }, 'resync');
        keys.forEach((key) => run.queue.add(key));
        this.scheduleResync(run);
      },
      period * (1 - RESYNC_JITTER + Math.random() * 2 * RESYNC_JITTER),
    );
  }

  private async work(run: Run): Promise<void> {
    for (;;) {
      const key = await run.queue.get();
      if (key === undefined) {
        return;
      }
      if (this.run !== run) {
        // Stopping: keys still queued are not started (the next start relists and resyncs everything).
        run.queue.done(key);
        return;
      }
      await this.reconcileKey(run, key);
    }
  }

  private async reconcileKey(run: Run, key: string): Promise<void> {
    const { queue } = run;
    run.active += 1;
    const end = this.metrics.startReconcile();
    try {
      const result = (await this.options.reconcile(key, run.reconcileAbort.signal)) ?? {};
      if (result.requeueAfter !== undefined && result.requeueAfter > 0) {
        queue.forget(key);
        queue.addAfter(key, result.requeueAfter);
        end('requeue_after');
      } else if (result.requeue) {
        queue.addRateLimited(key);
        end('requeue');
      } else {
        queue.forget(key);
        end('success');
      }
    } catch (err) {
      const terminal = err instanceof TerminalError;
      if (!terminal) {
        queue.addRateLimited(key);
      }
      end('error', terminal);
      this.logger.error({ err, key, retries: queue.numRequeues(key), terminal }, 'reconciler error');
    } finally {
      run.active -= 1;
      queue.done(key);
    }
  }
}
