import type { KubernetesObject } from '@kubernetes/client-node';
import { KubeApiError, isGone } from '../../../src/kube/api-error.js';
import type {
  ListOptions,
  ListWatchSource,
  WatchHandlers,
  WatchOptions,
} from '../../../src/kube/list-watch.js';

/**
 * Wraps a real list/watch source so a test can break the informer's connection on purpose: cut it (as a
 * network failure), keep it down while the test changes things, and answer the next watch with 410 Gone.
 *
 * The 410 is the one answer made here rather than by the server: a fresh control plane has compacted
 * nothing yet (the kube-apiserver compacts etcd every 5 minutes) and its watch cache still holds every
 * event since it started, so even resourceVersion 1 is served, not expired. The wire form of a real 410
 * (status code, or ERROR event in the stream) is covered by the unit tests over HTTP.
 */
export class SabotagedSource<T extends KubernetesObject> implements ListWatchSource<T> {
  lists = 0;
  watches = 0;
  goneAnswers = 0;
  private current?: { stop: () => void; handlers: WatchHandlers<T> };
  private outage?: { promise: Promise<void>; end: () => void };
  private expireNext = false;

  constructor(private readonly real: ListWatchSource<T>) {}

  async list(options: ListOptions<T>) {
    await this.outage?.promise;
    this.lists += 1;
    return this.real.list(options);
  }

  watch(options: WatchOptions, handlers: WatchHandlers<T>): () => void {
    let stopRealWatch: (() => void) | undefined;
    let stopped = false;
    const wrapped: WatchHandlers<T> = {
      onEvent: (event) => handlers.onEvent(event),
      onClose: (error) => {
        if (isGone(error)) {
          this.goneAnswers += 1;
        }
        handlers.onClose(error);
      },
    };
    const open = (): void => {
      if (stopped) {
        return;
      }
      this.watches += 1;
      if (this.expireNext) {
        this.expireNext = false;
        const message = `too old resource version: ${options.resourceVersion}`;
        wrapped.onClose(KubeApiError.fromStatus({ kind: 'Status', code: 410, reason: 'Expired', message }));
        return;
      }
      stopRealWatch = this.real.watch(options, wrapped);
    };
    const stop = (): void => {
      stopped = true;
      stopRealWatch?.();
    };
    this.current = { stop, handlers };
    void (this.outage?.promise ?? Promise.resolve()).then(open);
    return stop;
  }

  /** Ends the open watch (with `error`, or as a normal end) and holds new lists and watches until `reconnect`. */
  disconnect(error?: Error): void {
    let end = (): void => undefined;
    const promise = new Promise<void>((resolve) => (end = resolve));
    this.outage = { promise, end };
    const current = this.current;
    current?.stop();
    current?.handlers.onClose(error);
  }

  /** The next watch is answered 410 Expired, as the server does for a compacted resourceVersion. */
  expireNextWatch(): void {
    this.expireNext = true;
  }

  reconnect(): void {
    this.outage?.end();
    this.outage = undefined;
  }
}
