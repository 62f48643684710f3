import { describe, expect, it } from 'vitest';
import { inCodeUnitOrder, SortedIds } from '../../../../src/decision/authzen/sorted-ids.js';

describe('SortedIds', () => {
  it('pages in code-unit order, each id once, with `more` while some remain', () => {
    const ids = new SortedIds(['c', 'a', 'e', 'b', 'd']);
    const first = ids.pageAfter(undefined, 2);
    expect(first).toEqual({ items: ['a', 'b'], last: 'b', more: true });
    const second = ids.pageAfter(first.last, 2);
    expect(second).toEqual({ items: ['c', 'd'], last: 'd', more: true });
    expect(ids.pageAfter(second.last, 2)).toEqual({ items: ['e'], last: 'e', more: false });
    expect(ids.pageAfter('e', 2)).toEqual({ items: [], last: undefined, more: false });
  });

  it('pages the same once compacted', () => {
    const ids = Array.from({ length: 50 }, (_, index) => `id-${(index * 7) % 50}`);
    const pages = (sorted: SortedIds) =>
      [undefined, 'id-1', 'id-25', 'id-49', 'id-5x'].map((after) => sorted.pageAfter(after, 7));
    expect(pages(new SortedIds(ids).compact())).toEqual(pages(new SortedIds(ids)));
  });

  it('continues after an id it does not hold, and holds no answer as well as one', () => {
    const ids = new SortedIds(['a', 'c', 'e']);
    expect(ids.pageAfter('b', 10).items).toEqual(['c', 'e']);
    expect(new SortedIds([]).pageAfter(undefined, 10)).toEqual({ items: [], last: undefined, more: false });
  });

  it('holds an id in a few bytes beyond its own', () => {
    const ids = new SortedIds(Array.from({ length: 1_000 }, (_, index) => `user-${index}`.padEnd(36, 'x')));
    expect(ids.count).toBe(1_000);
    expect(ids.bytes).toBeLessThanOrEqual(1_000 * (37 * 2 + 4) + 4);
  });

  it('orders by code units, as a continuation compares with `>`', () => {
    expect(inCodeUnitOrder(['b', 'B', 'a', 'é', 'Z', '10', '9'])).toEqual([
      '10',
      '9',
      'B',
      'Z',
      'a',
      'b',
      'é',
    ]);
  });
});
