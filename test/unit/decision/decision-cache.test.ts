import { describe, expect, it } from 'vitest';
import { DecisionCache } from '../../../src/decision/decision-cache.js';
import type {
  CacheEviction,
  CacheLookup,
  CheckIdentity,
  Decision,
  DecisionCacheSettings,
} from '../../../src/decision/decision-cache.js';

const SETTINGS: DecisionCacheSettings = {
  enabled: true,
  maxEntries: 100,
  allowTtlMs: 5_000,
  denyTtlMs: 1_000,
};

/** A check of user `user` on resource `resource`. */
function check(resource: string, user: string, rememberable = true): CheckIdentity {
  return {
    id: `resource:${resource}#api@user:${user}#`,
    keys: [`resource:${resource}`, `user:${user}`],
    resource: { type: 'resource', id: resource },
    rememberable,
  };
}

/** A SpiceDB stand-in whose answers the test releases one by one. */
function spicedb() {
  const pending: Array<(decision: Decision) => void> = [];
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    ask: (): Promise<Decision> => {
      calls += 1;
      return new Promise((resolve) => pending.push(resolve));
    },
    answer(allowed: boolean) {
      pending.shift()?.({ allowed, checkedAt: `rev-${calls}` });
    },
    /** Answers at once. */
    immediately: (allowed: boolean) => (): Promise<Decision> => {
      calls += 1;
      return Promise.resolve({ allowed, checkedAt: `rev-${calls}` });
    },
  };
}

function cacheAt(
  settings: Partial<DecisionCacheSettings> = {},
  allowBoundMs?: (check: CheckIdentity) => number,
) {
  const clock = { now: 1_000 };
  const watch = { current: true };
  const lookups: CacheLookup[] = [];
  const evictions: Array<[CacheEviction, number]> = [];
  const cache = new DecisionCache({
    settings: { ...SETTINGS, ...settings },
    trustworthy: () => watch.current,
    ...(allowBoundMs ? { allowBoundMs } : {}),
    events: {
      looked: (outcome) => lookups.push(outcome),
      evicted: (reason, count) => evictions.push([reason, count]),
    },
    now: () => clock.now,
  });
  return { cache, clock, watch, lookups, evictions };
}

describe('DecisionCache', () => {
  it('answers a repeated check from memory, and counts hits and misses', async () => {
    const { cache, lookups } = cacheAt();
    const db = spicedb();
    expect(await cache.decide(check('r', 'u'), db.immediately(true))).toEqual({
      allowed: true,
      checkedAt: 'rev-1',
    });
    expect(await cache.decide(check('r', 'u'), db.immediately(false))).toEqual({
      allowed: true,
      checkedAt: 'rev-1',
    });
    expect(db.calls).toBe(1);
    expect(lookups).toEqual(['miss', 'hit']);
    expect(cache.size).toBe(1);
  });

  it('works without event listeners or a clock of its own, on the monotonic clock', async () => {
    const cache = new DecisionCache({ settings: { ...SETTINGS, denyTtlMs: 0 }, trustworthy: () => true });
    const db = spicedb();
    await cache.decide(check('r', 'u'), db.immediately(true));
    await cache.decide(check('r', 'u'), db.immediately(true));
    await cache.decide(check('d', 'u'), db.immediately(false));
    await cache.decide(check('d', 'u'), db.immediately(false));
    expect(db.calls).toBe(3); // the allow remembered, the deny expired at once
    cache.dropAll();
    expect(cache.size).toBe(0);
  });

  it('forgets a decision when a change touches its resource or its subject, and only then', async () => {
    const { cache, evictions } = cacheAt();
    const db = spicedb();
    await cache.decide(check('r', 'u'), db.immediately(true));
    await cache.decide(check('r2', 'u2'), db.immediately(true));
    cache.changed(['resource:other', 'user:other']);
    expect(cache.size).toBe(2);
    cache.changed(['resource:r', 'user:x']);
    expect(await cache.decide(check('r', 'u'), db.immediately(false))).toMatchObject({ allowed: false });
    cache.changed(['organization:o', 'user:u2', 'memberships:*']);
    expect(await cache.decide(check('r2', 'u2'), db.immediately(false))).toMatchObject({ allowed: false });
    expect(db.calls).toBe(4);
    expect(evictions).toEqual([
      ['changed', 1],
      ['changed', 1],
    ]);
  });

  it('does not remember an answer when a change touched the check while it was in flight', async () => {
    const { cache } = cacheAt();
    const db = spicedb();
    const before = cache.decide(check('r', 'u'), db.ask);
    cache.changed(['user:u']);
    db.answer(true);
    expect(await before).toMatchObject({ allowed: true });
    // The revocation the Watch delivered meanwhile may postdate that answer: ask again.
    const after = cache.decide(check('r', 'u'), db.ask);
    db.answer(false);
    expect(await after).toMatchObject({ allowed: false });
    expect(db.calls).toBe(2);
  });

  it('shares one call among identical checks in flight, but not with a check that arrived after a change', async () => {
    const { cache, lookups } = cacheAt();
    const db = spicedb();
    const first = cache.decide(check('r', 'u'), db.ask);
    const second = cache.decide(check('r', 'u'), db.ask);
    expect(db.calls).toBe(1);
    cache.changed(['resource:r']);
    const third = cache.decide(check('r', 'u'), db.ask);
    expect(db.calls).toBe(2);
    db.answer(true);
    db.answer(false);
    expect(await first).toMatchObject({ allowed: true });
    expect(await second).toMatchObject({ allowed: true });
    expect(await third).toMatchObject({ allowed: false });
    expect(lookups).toEqual(['miss', 'shared', 'miss']);
    // The third was sent after the change: it is remembered.
    expect(await cache.decide(check('r', 'u'), db.ask)).toMatchObject({ allowed: false });
    expect(db.calls).toBe(2);
  });

  it('shares a failure among the checks in flight and remembers nothing of it', async () => {
    const { cache } = cacheAt();
    const failing = () => Promise.reject(new Error('spicedb unavailable'));
    const first = cache.decide(check('r', 'u'), failing);
    const second = cache.decide(check('r', 'u'), failing);
    await expect(first).rejects.toThrow('spicedb unavailable');
    await expect(second).rejects.toThrow('spicedb unavailable');
    expect(cache.size).toBe(0);
    expect(await cache.decide(check('r', 'u'), spicedb().immediately(true))).toMatchObject({ allowed: true });
  });

  it('serves nothing from memory and shares nothing while the Watch is not current', async () => {
    const { cache, watch } = cacheAt();
    const db = spicedb();
    await cache.decide(check('r', 'u'), db.immediately(true));
    watch.current = false;
    await cache.decide(check('r', 'u'), db.immediately(false));
    const first = cache.decide(check('r2', 'u'), db.ask);
    const second = cache.decide(check('r2', 'u'), db.ask);
    expect(db.calls).toBe(4);
    db.answer(true);
    db.answer(true);
    await Promise.all([first, second]);
    watch.current = true;
    expect(await cache.decide(check('r2', 'u'), db.immediately(false))).toMatchObject({ allowed: false });
  });

  it('drops everything, in memory and in flight, when what changed is unknown', async () => {
    const { cache, evictions } = cacheAt();
    const db = spicedb();
    await cache.decide(check('r', 'u'), db.immediately(true));
    await cache.decide(check('r2', 'u2'), db.immediately(true));
    const inFlight = cache.decide(check('r3', 'u3'), db.ask);
    cache.dropAll();
    db.answer(true);
    await inFlight;
    expect(cache.size).toBe(0);
    expect(evictions).toEqual([['dropped', 2]]);
    await cache.decide(check('r3', 'u3'), db.immediately(false));
    expect(db.calls).toBe(4);
  });

  it('remembers denies for the deny TTL and allows for the allow TTL', async () => {
    const { cache, clock, evictions } = cacheAt({ allowTtlMs: 5_000, denyTtlMs: 1_000 });
    const db = spicedb();
    await cache.decide(check('allowed', 'u'), db.immediately(true));
    await cache.decide(check('denied', 'u'), db.immediately(false));
    clock.now += 999;
    await cache.decide(check('denied', 'u'), db.immediately(false));
    expect(db.calls).toBe(2);
    clock.now += 1;
    await cache.decide(check('denied', 'u'), db.immediately(false));
    expect(db.calls).toBe(3);
    clock.now += 4_000;
    await cache.decide(check('allowed', 'u'), db.immediately(true));
    expect(db.calls).toBe(4);
    expect(evictions).toEqual([
      ['expired', 1],
      ['expired', 1],
    ]);
  });

  it('ends an allow at its resource’s bound (an expiry) when that comes before the allow TTL, and remembers none at 0', async () => {
    const bounds: Record<string, number> = { expiring: 2_000, expired: 0, lasting: Infinity };
    const { cache, clock } = cacheAt({ allowTtlMs: 60_000 }, ({ resource }) => bounds[resource.id] ?? 0);
    const db = spicedb();
    for (const resource of ['expiring', 'expired', 'lasting']) {
      await cache.decide(check(resource, 'u'), db.immediately(true));
    }
    expect(cache.size).toBe(2);
    clock.now += 1_999;
    for (const resource of ['expiring', 'expired', 'lasting']) {
      await cache.decide(check(resource, 'u'), db.immediately(true));
    }
    expect(db.calls).toBe(4); // only the expired one asked again
    clock.now += 1;
    await cache.decide(check('expiring', 'u'), db.immediately(true));
    clock.now += 57_999;
    await cache.decide(check('lasting', 'u'), db.immediately(true));
    expect(db.calls).toBe(5); // the expiring one at its bound; the lasting one until the allow TTL
    clock.now += 1;
    await cache.decide(check('lasting', 'u'), db.immediately(true));
    expect(db.calls).toBe(6);
  });

  it('evicts the least recently used decision past its bound', async () => {
    const { cache, evictions } = cacheAt({ maxEntries: 2 });
    const db = spicedb();
    await cache.decide(check('a', 'u'), db.immediately(true));
    await cache.decide(check('b', 'u'), db.immediately(true));
    await cache.decide(check('a', 'u'), db.immediately(true)); // a is now the most recently used
    await cache.decide(check('c', 'u'), db.immediately(true));
    expect(cache.size).toBe(2);
    expect(evictions).toEqual([['capacity', 1]]);
    await cache.decide(check('a', 'u'), db.immediately(true));
    expect(db.calls).toBe(3);
    await cache.decide(check('b', 'u'), db.immediately(true));
    expect(db.calls).toBe(4);
  });

  it('never remembers checks with a caller’s token, nor anything when off; identical ones in flight still share', async () => {
    for (const [settings, token] of [
      [{}, true],
      [{ enabled: false }, false],
    ] as const) {
      const { cache } = cacheAt(settings);
      const db = spicedb();
      const identity = check('r', 'u', !token);
      const first = cache.decide(identity, db.ask);
      const second = cache.decide(identity, db.ask);
      db.answer(true);
      await Promise.all([first, second]);
      expect(db.calls).toBe(1);
      await cache.decide(identity, db.immediately(true));
      expect(db.calls).toBe(2);
      expect(cache.size).toBe(0);
    }
  });
});
