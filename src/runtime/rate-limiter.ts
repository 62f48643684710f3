import { monotonicNow } from './timing.js';

/** client-go's workqueue.RateLimiter: how long a key waits before it is retried. */
export interface RateLimiter {
  /** The delay for the next retry of `key`; counts as a retry. */
  when(key: string): number;
  /** Stop tracking `key` (it succeeded). */
  forget(key: string): void;
  numRequeues(key: string): number;
}

/** base * 2^failures per key, capped at max. */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseDelayMs: number,
    private readonly maxDelayMs: number,
  ) {}

  when(key: string): number {
    const exponent = this.failures.get(key) ?? 0;
    this.failures.set(key, exponent + 1);
    return Math.min(this.baseDelayMs * 2 ** exponent, this.maxDelayMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * An overall token bucket over all keys (golang.org/x/time/rate's Reserve): `qps` tokens a second, at
 * most `burst` saved up; a retry without a token waits until its token is due.
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = monotonicNow,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  when(): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The longest delay of several limiters. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((limiter) => limiter.when(key)));
  }

  forget(key: string): void {
    for (const limiter of this.limiters) {
      limiter.forget(key);
    }
  }

  numRequeues(key: string): number {
    return Math.max(...this.limiters.map((limiter) => limiter.numRequeues(key)));
  }
}

/** controller-runtime's default: per-key 5ms doubling to 1000s, and 10 qps with a burst of 100 overall. */
export function defaultControllerRateLimiter(): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialFailureRateLimiter(5, 1_000_000),
    new BucketRateLimiter(10, 100),
  );
}
