import { describe, expect, it } from 'vitest';
import { WriteExpectations } from '../../../src/controller/write-expectations.js';

describe('WriteExpectations', () => {
  it('calls a cache stale while it holds a version our own writes replaced', () => {
    const expectations = new WriteExpectations();
    expectations.wrote('ns/g', '1'); // finalizer added: 1 → 2
    expectations.wrote('ns/g', '2'); // status written: 2 → 3
    expect(expectations.isStale('ns/g', '1')).toBe(true);
    expect(expectations.isStale('ns/g', '2')).toBe(true);
    expect(expectations.isStale('other/g', '1')).toBe(false);
  });

  it('forgets once the cache holds a newer version, ours or anyone else\u2019s', () => {
    const expectations = new WriteExpectations();
    expectations.wrote('ns/g', '1');
    expect(expectations.isStale('ns/g', '7')).toBe(false);
    expect(expectations.isStale('ns/g', '1')).toBe(false);
  });
});
