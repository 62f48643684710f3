import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Registry as MetricsRegistry } from 'prom-client';
import { WorkQueue } from '../../../src/runtime/workqueue.js';
import { ItemExponentialFailureRateLimiter } from '../../../src/runtime/rate-limiter.js';

/** Whether `promise` has settled once pending callbacks ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('WorkQueue', () => {
  it('queues a key added several times while waiting only once', async () => {
    const queue = new WorkQueue({ name: 'q' });
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
    expect(queue.len()).toBe(0);
  });

  it('hands out keys in the order they were first added', async () => {
    const queue = new WorkQueue({ name: 'q' });
    ['c', 'a', 'b', 'a'].forEach((key) => queue.add(key));
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(['c', 'a', 'b']);
  });

  it('never hands out a key being processed; re-queues it after done', async () => {
    const queue = new WorkQueue({ name: 'q' });
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(0);
    const second = queue.get();
    expect(await isSettled(second)).toBe(false);
    queue.done('a');
    expect(await second).toBe('a');
    queue.done('a');
    const third = queue.get();
    expect(await isSettled(third)).toBe(false);
    queue.shutDown();
  });

  it('does not re-queue a processed key that was not added again', async () => {
    const queue = new WorkQueue({ name: 'q' });
    queue.add('a');
    await queue.get();
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  it('wakes a waiting get when a key is added', async () => {
    const queue = new WorkQueue({ name: 'q' });
    const pending = queue.get();
    queue.add('a');
    expect(await pending).toBe('a');
  });

  it('gives each of several waiting workers a different key', async () => {
    const queue = new WorkQueue({ name: 'q' });
    const workers = [queue.get(), queue.get()];
    queue.add('a');
    queue.add('a');
    queue.add('b');
    expect(await Promise.all(workers)).toEqual(['a', 'b']);
  });

  describe('shutdown', () => {
    it('wakes waiting gets with undefined and ignores later adds', async () => {
      const queue = new WorkQueue({ name: 'q' });
      const waiting = queue.get();
      queue.shutDown();
      expect(await waiting).toBeUndefined();
      queue.add('a');
      expect(queue.len()).toBe(0);
      expect(await queue.get()).toBeUndefined();
      expect(queue.isShuttingDown()).toBe(true);
    });

    it('still hands out what was queued before the shutdown, then undefined', async () => {
      const queue = new WorkQueue({ name: 'q' });
      queue.add('a');
      queue.shutDown();
      expect(await queue.get()).toBe('a');
      expect(await queue.get()).toBeUndefined();
    });

    it('shutDownWithDrain resolves only once every key handed out is done', async () => {
      const queue = new WorkQueue({ name: 'q' });
      queue.add('a');
      queue.add('b');
      await queue.get();
      await queue.get();
      let drained = false;
      const drain = queue.shutDownWithDrain().then(() => (drained = true));
      queue.done('a');
      await new Promise((resolve) => setImmediate(resolve));
      expect(drained).toBe(false);
      queue.done('b');
      await drain;
      expect(drained).toBe(true);
    });

    it('shutDownWithDrain resolves at once when nothing is being processed', async () => {
      const queue = new WorkQueue({ name: 'q' });
      await expect(queue.shutDownWithDrain()).resolves.toBeUndefined();
    });
  });

  describe('delays (fake clock)', () => {
    beforeEach(() => vi.useFakeTimers());
    afterEach(() => vi.useRealTimers());

    it('addAfter adds the key only when its delay has passed, in order of readiness', async () => {
      const queue = new WorkQueue({ name: 'q' });
      queue.addAfter('late', 300);
      queue.addAfter('early', 100);
      queue.addAfter('now', 0);
      expect(queue.len()).toBe(1);
      expect(await queue.get()).toBe('now');
      await vi.advanceTimersByTimeAsync(99);
      expect(queue.len()).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(await queue.get()).toBe('early');
      await vi.advanceTimersByTimeAsync(200);
      expect(await queue.get()).toBe('late');
    });

    it('addAfter waits delays longer than a timer can (2^31-1 ms) in full', async () => {
      const queue = new WorkQueue({ name: 'q' });
      const days = 86_400_000;
      queue.addAfter('expires-in-a-year', 365 * days);
      await vi.advanceTimersByTimeAsync(30 * days);
      expect(queue.len()).toBe(0);
      await vi.advanceTimersByTimeAsync(335 * days);
      expect(await queue.get()).toBe('expires-in-a-year');
    });

    it('addAfter of a key already waiting keeps the earlier time', async () => {
      const queue = new WorkQueue({ name: 'q' });
      queue.addAfter('a', 100);
      queue.addAfter('a', 500);
      await vi.advanceTimersByTimeAsync(100);
      expect(queue.len()).toBe(1);
      await queue.get();
      queue.done('a');
      await vi.advanceTimersByTimeAsync(1000);
      expect(queue.len()).toBe(0);
    });

    it('addAfter with a sooner time replaces a later one', async () => {
      const queue = new WorkQueue({ name: 'q' });
      queue.addAfter('a', 500);
      queue.addAfter('a', 50);
      await vi.advanceTimersByTimeAsync(50);
      expect(queue.len()).toBe(1);
      await queue.get();
      queue.done('a');
      await vi.advanceTimersByTimeAsync(1000);
      expect(queue.len()).toBe(0);
    });

    it('shutDown drops delayed adds', async () => {
      const queue = new WorkQueue({ name: 'q' });
      queue.addAfter('a', 100);
      queue.shutDown();
      await vi.advanceTimersByTimeAsync(200);
      expect(await queue.get()).toBeUndefined();
    });

    it('addRateLimited backs off per key and forget resets it', async () => {
      const queue = new WorkQueue({ name: 'q', rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000) });
      const readyAfter = async (key: string): Promise<number> => {
        queue.addRateLimited(key);
        let waited = 0;
        while (queue.len() === 0) {
          await vi.advanceTimersByTimeAsync(1);
          waited += 1;
        }
        await queue.get();
        queue.done(key);
        return waited;
      };
      expect([await readyAfter('a'), await readyAfter('a'), await readyAfter('a')]).toEqual([5, 10, 20]);
      expect(queue.numRequeues('a')).toBe(3);
      expect(await readyAfter('b')).toBe(5);
      queue.forget('a');
      expect(queue.numRequeues('a')).toBe(0);
      expect(await readyAfter('a')).toBe(5);
    });
  });

  describe('metrics', () => {
    async function metricValue(
      registry: MetricsRegistry,
      name: string,
      labels: Record<string, string>,
    ): Promise<number> {
      const metric = await registry.getSingleMetric(name)?.get();
      const sample = metric?.values.find((value) =>
        Object.entries(labels).every(([label, expected]) => value.labels[label] === expected),
      );
      return sample?.value ?? Number.NaN;
    }

    it("reports controller-runtime's workqueue metrics with name and controller labels", async () => {
      const registry = new MetricsRegistry();
      const queue = new WorkQueue({ name: 'grants', registry });
      const labels = { name: 'grants', controller: 'grants' };
      queue.add('a');
      queue.add('a');
      queue.add('b');
      expect(await metricValue(registry, 'workqueue_depth', labels)).toBe(2);
      expect(await metricValue(registry, 'workqueue_adds_total', labels)).toBe(2);
      await queue.get();
      expect(await metricValue(registry, 'workqueue_depth', labels)).toBe(1);
      expect(
        await metricValue(registry, 'workqueue_longest_running_processor_seconds', labels),
      ).toBeGreaterThanOrEqual(0);
      queue.done('a');
      queue.addAfter('c', 0);
      queue.addRateLimited('d');
      expect(await metricValue(registry, 'workqueue_retries_total', labels)).toBe(2);
      const text = await registry.metrics();
      for (const name of [
        'workqueue_queue_duration_seconds_count',
        'workqueue_work_duration_seconds_count',
        'workqueue_unfinished_work_seconds',
      ]) {
        expect(text).toContain(`${name}{name="grants",controller="grants"}`);
      }
      queue.shutDown();
    });

    it('lets two queues share one registry', () => {
      const registry = new MetricsRegistry();
      expect(() => {
        new WorkQueue({ name: 'one', registry });
        new WorkQueue({ name: 'two', registry });
      }).not.toThrow();
    });

    it('computes unfinished work at scrape time', async () => {
      vi.useFakeTimers();
      try {
        const registry = new MetricsRegistry();
        const queue = new WorkQueue({ name: 'slow', registry });
        queue.add('a');
        queue.add('b');
        await queue.get();
        await vi.advanceTimersByTimeAsync(2000);
        await queue.get();
        await vi.advanceTimersByTimeAsync(1000);
        const labels = { name: 'slow', controller: 'slow' };
        expect(await metricValue(registry, 'workqueue_unfinished_work_seconds', labels)).toBeCloseTo(4, 1);
        expect(
          await metricValue(registry, 'workqueue_longest_running_processor_seconds', labels),
        ).toBeCloseTo(3, 1);
      } finally {
        vi.useRealTimers();
      }
    });
  });
});
