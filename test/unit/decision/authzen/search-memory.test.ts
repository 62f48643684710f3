import { describe, expect, it } from 'vitest';
import { SearchMemory } from '../../../../src/decision/authzen/search-memory.js';

const ids = (count: number) => Array.from({ length: count }, (_, index) => `item-${index}`);

describe('SearchMemory', () => {
  it('holds an answer for its key: `get` leaves it held, `take` does not', () => {
    const memory = new SearchMemory<string[]>((answer) => answer.length);
    const answer = ids(3);
    memory.keep('key-a', answer);
    expect(memory.get('key-b')).toBeUndefined();
    expect(memory.get('key-a')).toBe(answer);
    expect(memory.take('key-a')).toBe(answer);
    expect(memory.take('key-a')).toBeUndefined();
  });

  it('holds a bounded number of bytes: the least recently used answers go first', () => {
    const memory = new SearchMemory<string[]>((answer) => answer.length * 1_024);
    // 60 answers of 1,000 ids of a kilobyte are more than it holds (32 MiB).
    for (let index = 0; index < 60; index++) memory.keep(`key-${index}`, ids(1_000));
    expect(memory.get('key-0')).toBeUndefined();
    expect(memory.get('key-59')).toHaveLength(1_000);
  });

  it('holds no answer larger than its bound', () => {
    const memory = new SearchMemory<string[]>(() => 33 * 1024 * 1024);
    memory.keep('key', ids(1));
    expect(memory.get('key')).toBeUndefined();
  });
});
