import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { hashSecret, parseSecretHash, verifySecret } from '../../../src/auth/secret-hash.js';
import { FAST } from './support/fast-scrypt.js';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof crypto>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

describe('scrypt secret hashes', () => {
  it('are written as scrypt$N$r$p$salt$hash with a fresh salt each time', async () => {
    const first = await hashSecret('s3cret', FAST);
    const second = await hashSecret('s3cret', FAST);
    expect(first).toMatch(/^scrypt\$1024\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(second).not.toBe(first);
  });

  it('use the default parameters when none are given', async () => {
    expect(await hashSecret('s3cret')).toMatch(/^scrypt\$32768\$8\$2\$/);
  });

  it('verify the right secret and refuse a wrong one, comparing in constant time', async () => {
    const stored = await hashSecret('s3cret', FAST);
    vi.mocked(crypto.timingSafeEqual).mockClear();
    expect(await verifySecret('s3cret', stored)).toBe(true);
    expect(await verifySecret('s3cret!', stored)).toBe(false);
    expect(crypto.timingSafeEqual).toHaveBeenCalledTimes(2);
  });

  it.each([
    ['another prefix', 'bcrypt$1024$8$1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA'],
    ['missing parts', 'scrypt$1024$8$1$c2FsdHNhbHQ'],
    ['N not a power of two', 'scrypt$1000$8$1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA'],
    ['N too large', `scrypt$${2 ** 21}$8$1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA`],
    ['r out of range', 'scrypt$1024$64$1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA'],
    ['a short hash', 'scrypt$1024$8$1$c2FsdHNhbHQ$aGFzaA'],
  ])('reject a stored value with %s', (_case, encoded) => {
    expect(() => parseSecretHash(encoded)).toThrow();
  });
});
