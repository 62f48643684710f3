import { describe, expect, it } from 'vitest';
import type { AclCache } from '../../../../src/acl/acl-cache.js';
import {
  MAX_WAIT_SECONDS,
  awaitEnforcement,
  waitPreference,
} from '../../../../src/acl/policies/enforcement-wait.js';
import type { PolicyGrant } from '../../../../src/api/v1alpha1/index.js';

describe('the Prefer header', () => {
  it.each([
    ['wait=5', 5],
    ['WAIT=7', 7],
    ['respond-async, wait=10', 10],
    ['handling=lenient; wait=3', 3],
    ['wait=0', 0],
    ['wait = 4', 4],
    ['wait="8"', 8],
    ['wait=2 ;x', 2],
    [`wait=${MAX_WAIT_SECONDS}`, MAX_WAIT_SECONDS],
  ])('%s asks to wait %i s', (prefer, seconds) => {
    expect(waitPreference(prefer)).toBe(seconds);
  });

  it.each(['wait=61', 'wait=3600', 'wait=999999'])('%s is clamped to the longest wait honoured', (prefer) => {
    expect(waitPreference(prefer)).toBe(MAX_WAIT_SECONDS);
  });

  it.each([
    undefined,
    '',
    'respond-async',
    'wait=',
    'wait=abc',
    'wait=-1',
    'wait=1.5',
    'wait=5s',
    'nowait=5',
    'wait=1234567',
  ])('%s asks for no wait', (prefer) => {
    expect(waitPreference(prefer)).toBeUndefined();
  });
});

/**
 * The cache as awaitEnforcement reads it: grants by uid, and waits that end when a grant in the wanted
 * state arrives (`put`) or when the test lets time run out (`expire`), so no test depends on a clock.
 */
class FakeCache implements Pick<AclCache, 'grantByUid' | 'waitForGrant'> {
  private readonly grants = new Map<string, PolicyGrant>();
  private waiters: { predicate: (grant: PolicyGrant) => boolean; done: (seen: boolean) => void }[] = [];

  put(grant: PolicyGrant): void {
    this.grants.set(grant.metadata.uid ?? '', grant);
    for (const waiter of [...this.waiters]) if (waiter.predicate(grant)) this.finish(waiter, true);
  }

  expire(): void {
    for (const waiter of [...this.waiters]) this.finish(waiter, false);
  }

  get waiting(): number {
    return this.waiters.length;
  }

  grantByUid(uid: string): PolicyGrant | undefined {
    return this.grants.get(uid);
  }

  waitForGrant(
    _namespace: string,
    name: string,
    predicate: (grant: PolicyGrant) => boolean,
  ): Promise<boolean> {
    const cached = [...this.grants.values()].find((grant) => grant.metadata.name === name);
    if (cached && predicate(cached)) return Promise.resolve(true);
    return new Promise((done) => this.waiters.push({ predicate, done }));
  }

  private finish(waiter: (typeof this.waiters)[number], seen: boolean): void {
    this.waiters = this.waiters.filter((other) => other !== waiter);
    waiter.done(seen);
  }
}

const UID = '6f1d2c3b-4a59-4e68-8d7c-0b1a2f3e4d5c';

function grant(
  condition?: { status: 'True' | 'False'; reason: string; observedGeneration?: number },
  generation = 1,
): PolicyGrant {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'PolicyGrant',
    metadata: { name: 'pg-1', namespace: 'policy-grant-system', uid: UID, generation },
    spec: {
      policyType: 'INDIVIDUAL',
      userId: '3f1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d',
      itemId: 'urn:dx:item:1',
      itemType: 'DATABANK',
      expiryTime: '2099-01-01T00:00:00Z',
      constraints: { access: [{ accessType: 'api' }] },
    },
    ...(condition
      ? {
          status: {
            zedToken: 'GhUKEzE3',
            conditions: [
              {
                type: 'Enforced',
                status: condition.status,
                reason: condition.reason,
                message: '',
                lastTransitionTime: '2026-06-01T12:00:00Z',
                observedGeneration: condition.observedGeneration ?? generation,
              },
            ],
          },
        }
      : {}),
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('waiting for enforcement', () => {
  it('answers once the controller reports the grant projected, with the projection’s token', async () => {
    const cache = new FakeCache();
    cache.put(grant());
    const reports = awaitEnforcement(cache, [UID], 'enforced', 60_000);
    await flush();
    expect(cache.waiting).toBe(1);
    cache.put(grant({ status: 'True', reason: 'Projected' }));
    expect(await reports).toEqual([
      { policyId: UID, enforced: true, reason: 'Projected', zedToken: 'GhUKEzE3' },
    ]);
  });

  it('the timeout answer: not enforced, no reason and no token when the controller said nothing', async () => {
    const cache = new FakeCache();
    cache.put(grant());
    const reports = awaitEnforcement(cache, [UID], 'enforced', 60_000);
    await flush();
    cache.expire();
    expect(await reports).toEqual([{ policyId: UID, enforced: false }]);
  });

  it('a condition of an older generation is not an answer for the current one', async () => {
    const cache = new FakeCache();
    cache.put(grant({ status: 'True', reason: 'Projected', observedGeneration: 1 }, 2));
    const reports = awaitEnforcement(cache, [UID], 'enforced', 60_000);
    await flush();
    expect(cache.waiting).toBe(1);
    cache.expire();
    expect(await reports).toEqual([{ policyId: UID, enforced: false }]);
  });

  it('ProjectionFailed is retried by the controller: the wait goes on, and a later projection answers', async () => {
    const cache = new FakeCache();
    cache.put(grant());
    const reports = awaitEnforcement(cache, [UID], 'enforced', 60_000);
    await flush();
    cache.put(grant({ status: 'False', reason: 'ProjectionFailed' }));
    await flush();
    expect(cache.waiting).toBe(1);
    cache.put(grant({ status: 'True', reason: 'Projected' }));
    expect(await reports).toMatchObject([{ enforced: true, reason: 'Projected' }]);
  });

  it('ProjectionFailed at the timeout: not enforced, the reason given, no token', async () => {
    const cache = new FakeCache();
    cache.put(grant({ status: 'False', reason: 'ProjectionFailed' }));
    const reports = awaitEnforcement(cache, [UID], 'enforced', 60_000);
    await flush();
    cache.expire();
    expect(await reports).toEqual([{ policyId: UID, enforced: false, reason: 'ProjectionFailed' }]);
  });

  it('a settled refusal ends the wait at once, without a token', async () => {
    const cache = new FakeCache();
    cache.put(grant({ status: 'False', reason: 'NotAuthorized' }));
    expect(await awaitEnforcement(cache, [UID], 'enforced', 60_000)).toEqual([
      { policyId: UID, enforced: false, reason: 'NotAuthorized' },
    ]);
    expect(cache.waiting).toBe(0);
  });

  it('a revocation waits for reason Revoked; a projection does not count for it', async () => {
    const cache = new FakeCache();
    cache.put(grant({ status: 'True', reason: 'Projected' }, 2));
    const reports = awaitEnforcement(cache, [UID], 'revoked', 60_000);
    await flush();
    cache.put(grant({ status: 'True', reason: 'Projected' }, 2));
    await flush();
    expect(cache.waiting).toBe(1);
    cache.put(grant({ status: 'False', reason: 'Revoked' }, 2));
    expect(await reports).toEqual([
      { policyId: UID, enforced: true, reason: 'Revoked', zedToken: 'GhUKEzE3' },
    ]);
  });

  it('a policy the cache does not know is reported not enforced without waiting', async () => {
    const cache = new FakeCache();
    expect(await awaitEnforcement(cache, [UID], 'enforced', 60_000)).toEqual([
      { policyId: UID, enforced: false },
    ]);
  });
});

describe('waiting for every Ready decision replica', () => {
  /** Confirms what `answers` says for a token, and records what it was asked. */
  function replicas(answer: { ready: number; passed: number }) {
    const asked: string[] = [];
    return {
      asked,
      confirm: async (zedToken: string) => {
        asked.push(zedToken);
        return answer;
      },
    };
  }

  it('reports a change enforced once every Ready replica confirmed the projection’s token', async () => {
    const cache = new FakeCache();
    cache.put(grant({ status: 'False', reason: 'Revoked' }));
    const confirming = replicas({ ready: 3, passed: 3 });
    expect(await awaitEnforcement(cache, [UID], 'revoked', 60_000, confirming)).toEqual([
      {
        policyId: UID,
        enforced: true,
        reason: 'Revoked',
        zedToken: 'GhUKEzE3',
        decisionReplicas: { ready: 3, passed: 3 },
      },
    ]);
    expect(confirming.asked).toEqual(['GhUKEzE3']);
  });

  it('a replica that did not confirm makes it not enforced, with the token still given', async () => {
    const cache = new FakeCache();
    cache.put(grant({ status: 'True', reason: 'Projected' }));
    expect(
      await awaitEnforcement(cache, [UID], 'enforced', 60_000, replicas({ ready: 3, passed: 2 })),
    ).toEqual([
      {
        policyId: UID,
        enforced: false,
        reason: 'Projected',
        zedToken: 'GhUKEzE3',
        decisionReplicas: { ready: 3, passed: 2 },
      },
    ]);
  });

  it('no Ready replica known is not enforced either', async () => {
    const cache = new FakeCache();
    cache.put(grant({ status: 'True', reason: 'Projected' }));
    expect(
      await awaitEnforcement(cache, [UID], 'enforced', 60_000, replicas({ ready: 0, passed: 0 })),
    ).toMatchObject([{ enforced: false, decisionReplicas: { ready: 0, passed: 0 } }]);
  });

  it('asks nothing for a change the controller has not reported, and once per token', async () => {
    const cache = new FakeCache();
    cache.put(grant({ status: 'False', reason: 'NotAuthorized' }));
    const confirming = replicas({ ready: 1, passed: 1 });
    expect(await awaitEnforcement(cache, [UID], 'enforced', 60_000, confirming)).toEqual([
      { policyId: UID, enforced: false, reason: 'NotAuthorized' },
    ]);
    cache.put(grant({ status: 'True', reason: 'Projected' }));
    await awaitEnforcement(cache, [UID, UID], 'enforced', 60_000, confirming);
    expect(confirming.asked).toEqual(['GhUKEzE3']);
  });
});
