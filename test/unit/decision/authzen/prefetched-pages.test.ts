import { describe, expect, it } from 'vitest';
import { PrefetchedPages } from '../../../../src/decision/authzen/prefetched-pages.js';

const page = (count: number) => ({
  resourceIds: Array.from({ length: count }, (_, index) => `item-${index}`),
  resultCount: count,
  cursor: `after-${count}`,
  lookedUpAt: 'revision',
});

describe('PrefetchedPages', () => {
  it('serves a kept page once, to the token it was kept for', () => {
    const pages = new PrefetchedPages();
    const kept = page(3);
    pages.keep('token-a', kept);
    expect(pages.take('token-b')).toBeUndefined();
    expect(pages.take('token-a')).toBe(kept);
    expect(pages.take('token-a')).toBeUndefined();
  });

  it('holds a bounded number of ids: the least recently kept pages go first', () => {
    const pages = new PrefetchedPages();
    // 60 pages of 1,000 ids are more than it holds (50,000 ids).
    for (let index = 0; index < 60; index++) pages.keep(`token-${index}`, page(1_000));
    expect(pages.take('token-0')).toBeUndefined();
    expect(pages.take('token-59')?.resultCount).toBe(1_000);
  });
});
