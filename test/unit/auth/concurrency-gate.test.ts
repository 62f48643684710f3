import { describe, expect, it } from 'vitest';
import { concurrencyGate, shareOf } from '../../../src/auth/concurrency-gate.js';

function deferred() {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

describe('concurrencyGate', () => {
  it('runs at most `concurrency` tasks at once, queues up to `queue`, and refuses the rest at once', async () => {
    const gate = concurrencyGate({ concurrency: 2, queue: 1 }, () => new Error('busy'));
    const blocker = deferred();
    let running = 0;
    let mostAtOnce = 0;
    const task = async () => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      await blocker.promise;
      running--;
      return 'done';
    };
    const started = [gate(task), gate(task)];
    await Promise.resolve();
    const queued = gate(task);
    await expect(gate(task)).rejects.toThrow('busy');
    blocker.release();
    expect(await Promise.all([...started, queued])).toEqual(['done', 'done', 'done']);
    expect(mostAtOnce).toBe(2);
  });

  it('frees the slot of a task that failed', async () => {
    const gate = concurrencyGate({ concurrency: 1, queue: 0 }, () => new Error('busy'));
    await expect(gate(() => Promise.reject(new Error('failed')))).rejects.toThrow('failed');
    expect(await gate(async () => 'next')).toBe('next');
  });

  it('holds a key to its share of the places, running and waiting, and gives them back as its tasks settle', async () => {
    const gate = concurrencyGate({ concurrency: 1, queue: 4 }, () => new Error('busy'), 2);
    const blocker = deferred();
    const task = async () => {
      await blocker.promise;
      return 'done';
    };
    const flood = [gate(task, 'flooder'), gate(task, 'flooder')];
    await expect(gate(task, 'flooder')).rejects.toThrow('busy');
    // Another key still finds a place, and so does a task without a key.
    const others = [gate(task, 'caller'), gate(task)];
    blocker.release();
    expect(await Promise.all([...flood, ...others])).toEqual(['done', 'done', 'done', 'done']);
    expect(await gate(task, 'flooder')).toBe('done');
  });

  it('gives a key a quarter of the places, at least one', () => {
    expect(shareOf({ concurrency: 1, queue: 16 })).toBe(4);
    expect(shareOf({ concurrency: 1, queue: 0 })).toBe(1);
  });
});
