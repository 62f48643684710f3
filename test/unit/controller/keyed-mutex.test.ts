import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../../src/controller/keyed-mutex.js';
import { sleep } from '../../../dev/wait/sleep.js';

const tick = () => sleep(1);

describe('KeyedMutex', () => {
  it('runs holders of one key one after the other, in arrival order', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const holder = (name: string) =>
      mutex.withLock(['k'], async () => {
        log.push(`${name} in`);
        await tick();
        log.push(`${name} out`);
      });
    await Promise.all([holder('a'), holder('b'), holder('c')]);
    expect(log).toEqual(['a in', 'a out', 'b in', 'b out', 'c in', 'c out']);
    expect(mutex.size).toBe(0);
  });

  it('lets holders of different keys run at once', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const holder = (key: string) =>
      mutex.withLock([key], async () => {
        log.push(`${key} in`);
        await tick();
        log.push(`${key} out`);
      });
    await Promise.all([holder('x'), holder('y')]);
    expect(log).toEqual(['x in', 'y in', 'x out', 'y out']);
  });

  it('never deadlocks holders that take overlapping sets in opposite orders', async () => {
    const mutex = new KeyedMutex();
    let done = 0;
    const holder = (keys: string[]) =>
      mutex.withLock(keys, async () => {
        await tick();
        done += 1;
      });
    await Promise.all([holder(['a', 'b']), holder(['b', 'a']), holder(['b', 'c', 'a']), holder(['c'])]);
    expect(done).toBe(4);
    expect(mutex.size).toBe(0);
  });

  it('releases the keys when the work throws', async () => {
    const mutex = new KeyedMutex();
    await expect(mutex.withLock(['k'], () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(mutex.withLock(['k'], async () => 'next')).resolves.toBe('next');
  });
});
