import { describe, expect, it } from 'vitest';
import { DeliveredRevisions } from '../../../src/decision/delivered-revisions.js';

describe('DeliveredRevisions', () => {
  it('answers at once for a token already delivered, and false at once without a wait', async () => {
    const delivered = new DeliveredRevisions(10);
    delivered.record('t1');
    expect(await delivered.waitFor('t1', 0)).toBe(true);
    expect(await delivered.waitFor('t2', 0)).toBe(false);
  });

  it('wakes every waiter of a token when it is delivered, and only those', async () => {
    const delivered = new DeliveredRevisions(10);
    const first = delivered.waitFor('t1', 60_000);
    const second = delivered.waitFor('t1', 60_000);
    const other = delivered.waitFor('t2', 20);
    expect(delivered.waiting).toBe(3);
    delivered.record('t1');
    expect(await first).toBe(true);
    expect(await second).toBe(true);
    expect(await other).toBe(false);
    expect(delivered.waiting).toBe(0);
  });

  it('gives up on abort', async () => {
    const delivered = new DeliveredRevisions(10);
    const abort = new AbortController();
    const waited = delivered.waitFor('t1', 60_000, abort.signal);
    abort.abort();
    expect(await waited).toBe(false);
    expect(delivered.waiting).toBe(0);
    expect(await delivered.waitFor('t1', 60_000, abort.signal)).toBe(false);
  });

  it('forgets the oldest token past its bound, and every token on reset', () => {
    const delivered = new DeliveredRevisions(2);
    delivered.record('t1');
    delivered.record('t2');
    delivered.record('t1'); // delivered again: the newest
    delivered.record('t3');
    expect([delivered.has('t1'), delivered.has('t2'), delivered.has('t3')]).toEqual([true, false, true]);
    delivered.reset();
    expect(delivered.has('t3')).toBe(false);
  });
});
