import { describe, expect, it } from 'vitest';
import { InternPool } from '../../../src/runtime/intern-pool.js';

describe('InternPool', () => {
  it('hands out one frozen instance per JSON value', () => {
    const pool = new InternPool();
    const first = pool.share({ access: [{ accessType: 'api' }] });
    const second = pool.share({ access: [{ accessType: 'api' }] });
    expect(second).toBe(first);
    expect(pool.share({ access: [{ accessType: 'file' }] })).not.toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.access[0])).toBe(true);
    expect(() => first.access.push({ accessType: 'sub' })).toThrow(TypeError);
  });

  it('passes undefined through and interns strings to equal values', () => {
    const pool = new InternPool();
    expect(pool.share(undefined)).toBeUndefined();
    expect(pool.intern(undefined)).toBeUndefined();
    expect(pool.intern(`2026-01-01T00:00:${'00'}Z`)).toBe('2026-01-01T00:00:00Z');
  });

  it('keeps two generations of at most its capacity: older values are no longer shared', () => {
    const pool = new InternPool(2);
    const first = pool.share(['a']);
    pool.share(['b']);
    pool.share(['c']); // the first generation ([a], [b]) becomes the previous one
    expect(pool.share(['a'])).toBe(first);
    pool.share(['d']);
    pool.share(['e']);
    pool.share(['f']); // [a] was let go with its generation
    expect(pool.share(['a'])).not.toBe(first);
    expect(pool.share(['a'])).toEqual(['a']);
  });
});
