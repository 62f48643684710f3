import { describe, expect, it } from 'vitest';
import { settleAll, valuesOrThrow } from '../../../src/acl/concurrency.js';
import { sleep } from '../../../dev/wait/sleep.js';

describe('settleAll', () => {
  it('runs at most `limit` tasks at once and keeps results in input order', async () => {
    let running = 0;
    let peak = 0;
    const results = await settleAll([5, 1, 4, 2, 3], 2, async (value) => {
      running++;
      peak = Math.max(peak, running);
      await sleep(value);
      running--;
      return value * 10;
    });
    expect(peak).toBe(2);
    expect(valuesOrThrow(results)).toEqual([50, 10, 40, 20, 30]);
  });

  it('waits for every task even when one fails, then valuesOrThrow rethrows the first failure', async () => {
    const finished: number[] = [];
    const results = await settleAll([1, 2, 3], 3, async (value) => {
      if (value === 1) throw new Error('one');
      await sleep(5);
      finished.push(value);
      return value;
    });
    expect(finished.sort()).toEqual([2, 3]);
    expect(() => valuesOrThrow(results)).toThrow('one');
  });

  it('an empty list settles at once', async () => {
    expect(await settleAll([], 4, async () => 1)).toEqual([]);
  });
});
