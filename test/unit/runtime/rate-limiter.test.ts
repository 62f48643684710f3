import { describe, expect, it } from 'vitest';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from '../../../src/runtime/rate-limiter.js';

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles from the base per key and caps at the max', () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    const delays = Array.from({ length: 20 }, () => limiter.when('a'));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays[17]).toBe(655_360);
    expect(delays[18]).toBe(1_000_000);
    expect(delays[19]).toBe(1_000_000);
    expect(limiter.numRequeues('a')).toBe(20);
  });

  it('keeps keys apart, and forget resets one', () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 1000);
    limiter.when('a');
    limiter.when('a');
    expect(limiter.when('b')).toBe(5);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(5);
    expect(limiter.numRequeues('b')).toBe(1);
  });

  it('stays at the cap however many failures', () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 1000);
    for (let i = 0; i < 2000; i++) {
      limiter.when('a');
    }
    expect(limiter.when('a')).toBe(1000);
  });
});

describe('BucketRateLimiter', () => {
  it('lets the burst through at once, then spaces retries at 1/qps', () => {
    let now = 0;
    const limiter = new BucketRateLimiter(10, 3, () => now);
    expect([limiter.when(), limiter.when(), limiter.when()]).toEqual([0, 0, 0]);
    expect(limiter.when()).toBeCloseTo(100);
    expect(limiter.when()).toBeCloseTo(200);
    now = 1000;
    // 1 s refills 10 tokens, capped at the burst of 3, less the 2 already owed.
    expect(limiter.when()).toBe(0);
    expect(limiter.numRequeues()).toBe(0);
  });
});

describe('MaxOfRateLimiter', () => {
  it('takes the longest delay and forgets in all', () => {
    let now = 0;
    const limiter = new MaxOfRateLimiter(
      new ItemExponentialFailureRateLimiter(5, 1000),
      new BucketRateLimiter(1, 1, () => now),
    );
    expect(limiter.when('a')).toBe(5);
    expect(limiter.when('a')).toBeCloseTo(1000);
    expect(limiter.numRequeues('a')).toBe(2);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    now = 10_000;
    expect(limiter.when('a')).toBe(5);
  });

  it("controller-runtime's default starts at 5ms and passes 100 keys before the bucket bites", () => {
    const limiter = defaultControllerRateLimiter();
    const first = Array.from({ length: 100 }, (_, i) => limiter.when(`key-${i}`));
    expect(first.every((delay) => delay === 5)).toBe(true);
    expect(limiter.when('one-more')).toBeGreaterThan(90);
  });
});
