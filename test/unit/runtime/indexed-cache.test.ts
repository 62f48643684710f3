import { describe, expect, it } from 'vitest';
import { IndexedCache } from '../../../src/runtime/indexed-cache.js';

interface Grant {
  item: string;
  users: string[];
}

const byUser = (grant: Grant): string[] => grant.users;

describe('IndexedCache', () => {
  it('finds objects by index value and keeps the index current on update and delete', () => {
    const cache = new IndexedCache<Grant>();
    cache.addIndex('user', byUser);
    cache.upsert('g1', { item: 'x', users: ['alice', 'bob'] });
    cache.upsert('g2', { item: 'y', users: ['bob'] });
    expect(
      cache
        .byIndex('user', 'bob')
        .map((g) => g.item)
        .sort(),
    ).toEqual(['x', 'y']);

    cache.upsert('g1', { item: 'x', users: ['carol'] });
    expect(cache.byIndex('user', 'alice')).toEqual([]);
    expect(cache.byIndex('user', 'bob').map((g) => g.item)).toEqual(['y']);
    expect(cache.byIndex('user', 'carol').map((g) => g.item)).toEqual(['x']);

    expect(cache.delete('g2')?.item).toBe('y');
    expect(cache.byIndex('user', 'bob')).toEqual([]);
    expect(cache.indexKeys('user', 'carol')).toEqual(['g1']);
  });

  it('keeps a value shared by several objects right as they come and go, one by one', () => {
    const cache = new IndexedCache<Grant>();
    cache.addIndex('item', (grant) => [grant.item, grant.item]);
    cache.upsert('g1', { item: 'x', users: [] });
    cache.upsert('g2', { item: 'x', users: [] });
    cache.upsert('g3', { item: 'x', users: [] });
    expect(cache.indexKeys('item', 'x')).toEqual(['g1', 'g2', 'g3']);
    cache.delete('g2');
    cache.delete('g1');
    expect(cache.indexKeys('item', 'x')).toEqual(['g3']);
    cache.upsert('g1', { item: 'x', users: [] });
    expect(cache.indexKeys('item', 'x').sort()).toEqual(['g1', 'g3']);
    cache.upsert('g1', { item: 'y', users: [] });
    cache.delete('g3');
    expect(cache.indexKeys('item', 'x')).toEqual([]);
    expect(cache.indexKeys('item', 'y')).toEqual(['g1']);
  });

  it('fills an index added late from the objects already cached', () => {
    const cache = new IndexedCache<Grant>();
    cache.upsert('g1', { item: 'x', users: ['alice'] });
    cache.addIndex('item', (grant) => [grant.item]);
    expect(cache.indexKeys('item', 'x')).toEqual(['g1']);
  });

  it('rejects an unknown or duplicate index', () => {
    const cache = new IndexedCache<Grant>();
    cache.addIndex('user', byUser);
    expect(() => cache.addIndex('user', byUser)).toThrow(/already exists/);
    expect(() => cache.byIndex('nope', 'x')).toThrow(/does not exist/);
  });

  it('returns the previous object from upsert and nothing from deleting an unknown key', () => {
    const cache = new IndexedCache<Grant>();
    expect(cache.upsert('g1', { item: 'x', users: [] })).toBeUndefined();
    expect(cache.upsert('g1', { item: 'y', users: [] })?.item).toBe('x');
    expect(cache.delete('missing')).toBeUndefined();
    expect(cache.size).toBe(1);
  });
});
