import type { Registry as MetricsRegistry } from 'prom-client';
import { defaultControllerRateLimiter } from './rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { PrometheusQueueMetrics, noQueueMetrics } from './workqueue-metrics.js';
import type { QueueMetrics } from './workqueue-metrics.js';
import { monotonicNow } from './timing.js';

export interface WorkQueueOptions {
  /** The `name` and `controller` label of the queue's metrics. */
  name: string;
  /** Where the workqueue_* metrics go; none when omitted. */
  registry?: MetricsRegistry;
  rateLimiter?: RateLimiter;
}

interface DelayedAdd {
  readyAt: number;
  timer: NodeJS.Timeout;
}

const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;
/**
 * client-go's rate-limiting work queue of string keys:
 * - a key added while it waits in the queue is queued once;
 * - a key added while it is being processed is queued again only after `done`, so no key is ever
 *   handed to two workers at once;
 * - `addAfter` delays an add (an earlier delay for a waiting key wins); `addRateLimited` delays it by
 *   the rate limiter's backoff; `forget` resets that backoff.
 * After `shutDown`, adds are ignored and `get` hands out what is still queued, then `undefined`.
 */
export class WorkQueue {
  readonly name: string;
  private readonly queue: string[] = [];
  /** Keys that need processing: queued, or added again while being processed. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, DelayedAdd>();
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shuttingDown = false;
  private readonly rateLimiter: RateLimiter;
  private readonly metrics: QueueMetrics;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter();
    this.metrics = options.registry
      ? new PrometheusQueueMetrics(options.registry, options.name)
      : noQueueMetrics;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) {
      return;
    }
    this.metrics.add(key);
    this.dirty.add(key);
    if (this.processing.has(key)) {
      return;
    }
    this.queue.push(key);
    this.handOut();
  }

  /** Adds `key` after `delayMs`; if it is already waiting for a later time, the earlier time wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) {
      return;
    }
    this.metrics.retry();
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const readyAt = monotonicNow() + delayMs;
    const waiting = this.delayed.get(key);
    if (waiting && waiting.readyAt <= readyAt) {
      return;
    }
    this.schedule(key, readyAt);
  }

  private schedule(key: string, readyAt: number): void {
    clearTimeout(this.delayed.get(key)?.timer);
    // setTimeout fires at once for delays beyond 2^31-1 ms (about 24.8 days): longer waits go in steps.
    const delay = Math.min(readyAt - monotonicNow(), MAX_TIMER_DELAY_MS);
    const timer = setTimeout(() => {
      if (monotonicNow() < readyAt) {
        this.schedule(key, readyAt);
        return;
      }
      this.delayed.delete(key);
      this.add(key);
    }, delay);
    this.delayed.set(key, { readyAt, timer });
  }

  addRateLimited(key: string): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** The next key to process (mark it `done` afterwards), waiting for one; `undefined` once shut down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.startProcessing(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) {
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: string): void {
    if (!this.processing.delete(key)) {
      return;
    }
    this.metrics.done(key);
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.handOut();
    } else if (this.processing.size === 0) {
      this.resolveDrainWaiters();
    }
  }

  /** Keys waiting to be handed out (not counting delayed ones, nor ones being processed). */
  len(): number {
    return this.queue.length;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Ignores adds from now on, drops delayed adds, and wakes waiting `get`s. */
  shutDown(): void {
    if (this.shuttingDown) {
      return;
    }
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) {
      clearTimeout(timer);
    }
    this.delayed.clear();
    for (const resolve of this.getters.splice(0)) {
      resolve(undefined);
    }
    this.metrics.close();
  }

  /** `shutDown`, then resolves once every key handed out has been marked done. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private handOut(): void {
    while (this.getters.length > 0 && this.queue.length > 0) {
      const key = this.queue.shift() as string;
      this.startProcessing(key);
      (this.getters.shift() as (key: string) => void)(key);
    }
  }

  private startProcessing(key: string): void {
    this.processing.add(key);
    this.dirty.delete(key);
    this.metrics.get(key);
  }

  private resolveDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) {
      resolve();
    }
  }
}
