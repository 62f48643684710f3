import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { AuthenticationError } from '../../../src/auth/authentication-error.js';
import type { Principal } from '../../../src/auth/principal.js';
import type { BearerVerifier } from '../../../src/auth/verifiers.js';
import { cachedBearerVerifier, withVerifiedTokenCache } from '../../../src/auth/verified-token-cache.js';
import { VerifierUnavailableError } from '../../../src/auth/verifier-unavailable.js';

const principal: Principal = { kind: 'user', id: 'u', roles: new Set() };

/** Counts verifications; `verdict` decides each one. */
function countingVerifier(verdict: (token: string) => Promise<Principal> = async () => principal) {
  const verified: string[] = [];
  const verifier: BearerVerifier = {
    verify(token) {
      verified.push(token);
      return verdict(token);
    },
  };
  return { verifier, verified };
}

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** An unsigned-looking JWT is enough: the cache only reads `exp`, the wrapped verifier checks. */
async function jwtExpiringAt(expSeconds: number): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(expSeconds)
    .sign(new Uint8Array(32));
}

describe('cachedBearerVerifier', () => {
  it("verifies again, within the TTL, once the verifier's keys changed", async () => {
    const { verifier, verified } = countingVerifier();
    let keys = 0;
    const cached = cachedBearerVerifier({ ...verifier, keysVersion: () => keys });
    await cached.verify('token');
    await cached.verify('token');
    expect(verified).toHaveLength(1);
    keys += 1;
    await cached.verify('token');
    expect(verified).toHaveLength(2);
  });

  it('verifies a token once within the TTL, and again after it', async () => {
    const time = clock();
    const { verifier, verified } = countingVerifier();
    const cached = cachedBearerVerifier(verifier, { ttlMs: 1_000, now: time.now });
    expect(await cached.verify('t1')).toBe(principal);
    expect(await cached.verify('t1')).toBe(principal);
    expect(verified).toEqual(['t1']);
    time.advance(1_001);
    await cached.verify('t1');
    expect(verified).toEqual(['t1', 't1']);
  });

  it('never trusts a token past its own exp', async () => {
    const time = clock(1_700_000_000_000);
    const { verifier, verified } = countingVerifier();
    const cached = cachedBearerVerifier(verifier, { ttlMs: 60_000, now: time.now });
    const token = await jwtExpiringAt(1_700_000_005);
    await cached.verify(token);
    time.advance(4_000);
    await cached.verify(token);
    expect(verified).toHaveLength(1);
    time.advance(1_001);
    await cached.verify(token);
    expect(verified).toHaveLength(2);
  });

  it('shares one verification among concurrent requests', async () => {
    const { verifier, verified } = countingVerifier(
      () => new Promise((resolve) => setTimeout(() => resolve(principal), 20)),
    );
    const cached = cachedBearerVerifier(verifier);
    await Promise.all(Array.from({ length: 10 }, () => cached.verify('t')));
    expect(verified).toEqual(['t']);
  });

  it('remembers a rejection briefly, and an outage not at all', async () => {
    const time = clock();
    let outage = true;
    const { verifier, verified } = countingVerifier(async (token) => {
      if (token === 'bad') throw new AuthenticationError('invalid token');
      if (outage) throw new VerifierUnavailableError('kubernetes');
      return principal;
    });
    const cached = cachedBearerVerifier(verifier, { rejectionTtlMs: 500, now: time.now });
    await expect(cached.verify('bad')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(cached.verify('bad')).rejects.toBeInstanceOf(AuthenticationError);
    expect(verified).toEqual(['bad']);
    time.advance(501);
    await expect(cached.verify('bad')).rejects.toBeInstanceOf(AuthenticationError);
    expect(verified).toEqual(['bad', 'bad']);

    await expect(cached.verify('good')).rejects.toBeInstanceOf(VerifierUnavailableError);
    outage = false;
    expect(await cached.verify('good')).toBe(principal);
    expect(verified).toEqual(['bad', 'bad', 'good', 'good']);
  });

  it('is bounded: the least recently used token is forgotten first', async () => {
    const { verifier, verified } = countingVerifier();
    const cached = cachedBearerVerifier(verifier, { maxEntries: 2 });
    await cached.verify('a');
    await cached.verify('b');
    await cached.verify('a'); // a is now the most recently used
    await cached.verify('c'); // evicts b
    await cached.verify('a');
    await cached.verify('b');
    expect(verified).toEqual(['a', 'b', 'c', 'b']);
  });

  it('an evicted token is verified again during an outage: the outage is answered, not a stale verdict', async () => {
    let outage = false;
    const { verifier, verified } = countingVerifier(async () => {
      if (outage) throw new VerifierUnavailableError('jwks');
      return principal;
    });
    const cached = cachedBearerVerifier(verifier, { maxEntries: 2 });
    await cached.verify('a');
    await cached.verify('b');
    await cached.verify('c'); // evicts a
    outage = true;
    expect(await cached.verify('c')).toBe(principal); // still remembered: no call during the outage
    await expect(cached.verify('a')).rejects.toBeInstanceOf(VerifierUnavailableError);
    await expect(cached.verify('a')).rejects.toBeInstanceOf(VerifierUnavailableError);
    expect(verified).toEqual(['a', 'b', 'c', 'a', 'a']);
    outage = false;
    expect(await cached.verify('a')).toBe(principal);
    expect(await cached.verify('a')).toBe(principal);
    expect(verified).toEqual(['a', 'b', 'c', 'a', 'a', 'a']);
  });

  it('an in-flight verification evicted and then failing by outage does not forget its successor', async () => {
    const pending: Array<{ token: string; settle: (ok: boolean) => void }> = [];
    const { verifier, verified } = countingVerifier(
      (token) =>
        new Promise<Principal>((resolve, reject) =>
          pending.push({
            token,
            settle: (ok) => (ok ? resolve(principal) : reject(new VerifierUnavailableError('kubernetes'))),
          }),
        ),
    );
    const settle = (ok: boolean) => pending.shift()?.settle(ok);
    const cached = cachedBearerVerifier(verifier, { maxEntries: 2 });
    const first = cached.verify('t'); // in flight, will fail
    const others = [cached.verify('x'), cached.verify('y')]; // evict t while in flight
    const second = cached.verify('t'); // a new verification of t, will succeed
    await new Promise((resolve) => setImmediate(resolve)); // verifications start on the next tick
    expect(verified).toEqual(['t', 'x', 'y', 't']);
    settle(false);
    settle(true);
    settle(true);
    settle(true);
    await expect(first).rejects.toBeInstanceOf(VerifierUnavailableError);
    await Promise.all(others);
    expect(await second).toBe(principal);
    const third = cached.verify('t');
    await new Promise((resolve) => setImmediate(resolve));
    expect(verified).toEqual(['t', 'x', 'y', 't']);
    settle(true); // settles a verification again, had the successor been forgotten
    expect(await third).toBe(principal);
  });
});

describe('withVerifiedTokenCache', () => {
  it('puts the cache in front of the bearer verifier and leaves Basic alone', async () => {
    const { verifier, verified } = countingVerifier();
    const basic = { verify: async () => principal };
    const authenticators = withVerifiedTokenCache({ bearer: verifier, basic, realm: 'r' });
    await authenticators.bearer?.verify('token');
    await authenticators.bearer?.verify('token');
    expect(verified).toEqual(['token']);
    expect(authenticators.basic).toBe(basic);
    expect(authenticators.realm).toBe('r');
  });

  it('changes nothing without a bearer verifier', () => {
    const basic = { verify: async () => principal };
    expect(withVerifiedTokenCache({ basic })).toEqual({ basic });
  });
});
