import { jittered } from './timing.js';

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Up to this fraction is added at random, so that many clients do not retry in step. */
  jitter: number;
}

/** client-go reflector's defaults: 800ms doubling to 30s, jitter 1.0. */
export const DEFAULT_WATCH_BACKOFF: BackoffOptions = { initialMs: 800, maxMs: 30_000, jitter: 1 };

/** Exponential backoff: initial, doubling up to max; reset after a success. */
export class Backoff {
  private failures = 0;

  constructor(private readonly options: BackoffOptions) {}

  next(): number {
    const base = Math.min(this.options.initialMs * 2 ** this.failures, this.options.maxMs);
    this.failures += 1;
    return jittered(base, this.options.jitter);
  }

  reset(): void {
    this.failures = 0;
  }
}
