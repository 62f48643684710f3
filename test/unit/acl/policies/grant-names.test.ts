import { describe, expect, it } from 'vitest';
import {
  idempotentGrantName,
  randomGrantName,
  requestHash,
} from '../../../../src/acl/policies/grant-names.js';
import { canonicalJson } from '../../../../src/http/canonical-json.js';

const NAME = /^pg-[0-9a-f]{40}$/;

describe('grant names', () => {
  it('with an Idempotency-Key: the same caller, key and position give the same name', () => {
    const name = idempotentGrantName('caller', 'key-1', 0);
    expect(name).toMatch(NAME);
    expect(idempotentGrantName('caller', 'key-1', 0)).toBe(name);
    expect(
      new Set([
        name,
        idempotentGrantName('caller', 'key-1', 1),
        idempotentGrantName('caller', 'key-2', 0),
        idempotentGrantName('other', 'key-1', 0),
      ]).size,
    ).toBe(4);
  });

  it('separators cannot be forged by moving text between caller and key', () => {
    expect(idempotentGrantName('a', 'b\n0', 1)).not.toBe(idempotentGrantName('a\nb', '0', 1));
  });

  it('without a key: random', () => {
    expect(randomGrantName()).toMatch(NAME);
    expect(randomGrantName()).not.toBe(randomGrantName());
  });
});

describe('request hash', () => {
  it('ignores key order and undefined members, not values or array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: undefined } })).toBe('{"a":{"d":[2,1]},"b":1}');
    expect(requestHash([{ a: 1, b: 2 }])).toBe(requestHash([{ b: 2, a: 1 }]));
    expect(requestHash([{ a: 1 }, { a: 2 }])).not.toBe(requestHash([{ a: 2 }, { a: 1 }]));
    expect(requestHash([{ a: '1' }])).not.toBe(requestHash([{ a: 1 }]));
  });
});
