import { describe, expect, it } from 'vitest';
import type { AccessRequest, Delegation } from '../../../../src/api/v1alpha1/index.js';
import {
  accessRequestFinishedAt,
  delegationFinishedAt,
  membershipFinishedAt,
} from '../../../../src/controller/garbage-collection/finished-objects.js';

const AT = '2026-01-02T03:04:05Z';
const LATER = '2027-01-01T00:00:00Z';

const delegation = (spec: Partial<Delegation['spec']>) =>
  ({ spec: { expiryTime: LATER, ...spec } }) as Pick<Delegation, 'spec'>;

describe('when a finished object finished', () => {
  it('a delegation: when revoked, else at its expiry (ahead while active)', () => {
    expect(delegationFinishedAt(delegation({ revokedAt: AT }))).toBe(Date.parse(AT));
    expect(delegationFinishedAt(delegation({}))).toBe(Date.parse(LATER));
    expect(delegationFinishedAt(delegation({ expiryTime: 'not a time' }))).toBeUndefined();
  });

  it('an access request: when it left PENDING; a pending one, or one without decidedAt, never', () => {
    const request = (status: AccessRequest['status']) => ({ status }) as Pick<AccessRequest, 'status'>;
    for (const state of ['APPROVED', 'REJECTED', 'WITHDRAWN', 'EXPIRED'] as const) {
      expect(accessRequestFinishedAt(request({ state, decidedAt: AT })), state).toBe(Date.parse(AT));
    }
    expect(accessRequestFinishedAt(request({ state: 'PENDING' }))).toBeUndefined();
    expect(accessRequestFinishedAt(request(undefined))).toBeUndefined();
    expect(accessRequestFinishedAt(request({ state: 'REJECTED' }))).toBeUndefined();
  });

  it('a membership: when removed; a member never', () => {
    expect(membershipFinishedAt({ spec: { removedAt: AT } })).toBe(Date.parse(AT));
    expect(membershipFinishedAt({ spec: {} })).toBeUndefined();
  });
});
