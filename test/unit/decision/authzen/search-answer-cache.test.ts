import { describe, expect, it } from 'vitest';
import { SearchAnswerCache } from '../../../../src/decision/authzen/search-answer-cache.js';

const ids = (count: number) => Array.from({ length: count }, (_, index) => `item-${index}`);

describe('SearchAnswerCache', () => {
  it('holds an answer for its key: `get` leaves it held, `take` does not', () => {
    const cache = new SearchAnswerCache<string[]>((answer) => answer.length);
    const answer = ids(3);
    cache.keep('key-a', answer);
    expect(cache.get('key-b')).toBeUndefined();
    expect(cache.get('key-a')).toBe(answer);
    expect(cache.take('key-a')).toBe(answer);
    expect(cache.take('key-a')).toBeUndefined();
  });

  it('holds a bounded number of bytes: the least recently used answers go first', () => {
    const cache = new SearchAnswerCache<string[]>((answer) => answer.length * 1_024);
    // 60 answers of 1,000 ids of a kilobyte are more than it holds (32 MiB).
    for (let index = 0; index < 60; index++) cache.keep(`key-${index}`, ids(1_000));
    expect(cache.get('key-0')).toBeUndefined();
    expect(cache.get('key-59')).toHaveLength(1_000);
  });

  it('holds no answer larger than its bound', () => {
    const cache = new SearchAnswerCache<string[]>(() => 33 * 1024 * 1024);
    cache.keep('key', ids(1));
    expect(cache.get('key')).toBeUndefined();
  });
});
