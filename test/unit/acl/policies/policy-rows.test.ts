import { describe, expect, it } from 'vitest';
import type { PolicyGrant } from '../../../../src/api/v1alpha1/index.js';
import {
  compareGrants,
  distinctSorted,
  selectPage,
  toRow,
  utcTimestamp,
} from '../../../../src/acl/policies/policy-rows.js';
import type { GrantVerdict } from '../../../../src/verdict/grant-verdict.js';

const now = new Date('2026-06-01T00:00:00Z');

function grant(uid: string, created: string, spec: Partial<PolicyGrant['spec']> = {}): PolicyGrant {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'PolicyGrant',
    metadata: { name: uid, uid, creationTimestamp: created as unknown as Date },
    spec: {
      policyType: 'INDIVIDUAL',
      userId: 'consumer',
      itemId: 'urn:i',
      itemType: 'DATABANK',
      expiryTime: '2027-01-01T00:00:00Z',
      constraints: { access: [{ accessType: 'api' }] },
      ...spec,
    },
  };
}

const effective: GrantVerdict = { enforce: true, relationships: [] };

describe('toRow', () => {
  it('maps a grant to the spec row; consumerId only when asked, ownerId only when known', () => {
    const row = toRow(grant('u1', '2026-01-01T00:00:00Z'), {
      ownerId: 'owner',
      withConsumer: true,
      now,
      verdict: effective,
    });
    expect(row).toEqual({
      policyId: 'u1',
      itemId: 'urn:i',
      itemType: 'DATABANK',
      ownerId: 'owner',
      status: 'ACTIVE',
      enforced: true,
      constraints: { access: [{ accessType: 'api' }] },
      expiryAt: '2027-01-01T00:00:00Z',
      consumerId: 'consumer',
    });
    const bare = toRow(grant('u1', '2026-01-01T00:00:00Z'), {
      ownerId: undefined,
      withConsumer: false,
      now,
      verdict: effective,
    });
    expect(bare).not.toHaveProperty('ownerId');
    expect(bare).not.toHaveProperty('consumerId');
  });

  it('derives the status: DELETED once revoked, EXPIRED past expiry', () => {
    const context = { ownerId: undefined, withConsumer: false, now, verdict: effective };
    expect(toRow(grant('u', 'x', { revokedAt: '2026-02-01T00:00:00Z' }), context).status).toBe('DELETED');
    expect(toRow(grant('u', 'x', { expiryTime: '2026-05-31T23:59:59Z' }), context).status).toBe('EXPIRED');
  });

  it('GROUP rows have no consumerId even in the provider listing', () => {
    const groupGrant = grant('u', 'x', { policyType: 'GROUP', userId: undefined });
    expect(
      toRow(groupGrant, { ownerId: undefined, withConsumer: true, now, verdict: effective }),
    ).not.toHaveProperty('consumerId');
  });

  it('marks a grant the verdict refuses: enforced false with the reason, its record state kept', () => {
    const verdict: GrantVerdict = { enforce: false, reason: 'NotAuthorized', message: 'elsewhere' };
    const row = toRow(grant('u', 'x'), { ownerId: undefined, withConsumer: false, now, verdict });
    expect(row).toMatchObject({ status: 'ACTIVE', enforced: false, enforcedReason: 'NotAuthorized' });
    expect(
      toRow(grant('u', 'x'), { ownerId: undefined, withConsumer: false, now, verdict: effective }),
    ).not.toHaveProperty('enforcedReason');
  });
});

describe('utcTimestamp', () => {
  it('writes times in UTC with Z, without a zero fraction', () => {
    expect(utcTimestamp('2027-01-31T02:00:00+02:00')).toBe('2027-01-31T00:00:00Z');
    expect(utcTimestamp('2027-01-31T00:00:00.250Z')).toBe('2027-01-31T00:00:00.250Z');
    expect(utcTimestamp('garbage')).toBe('garbage');
  });
});

describe('order and pages', () => {
  const grants = [
    grant('c', '2026-01-02T00:00:00Z'),
    grant('b', '2026-01-01T00:00:00Z'),
    grant('a', '2026-01-01T00:00:00Z', { revokedAt: '2026-03-01T00:00:00Z' }),
    grant('d', '2026-01-03T00:00:00Z'),
  ];

  it('orders by creationTimestamp, then uid', () => {
    expect([...grants].sort(compareGrants).map((g) => g.metadata.uid)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('distinctSorted keeps each grant once; pages are cut after filtering and count every match', () => {
    const ordered = distinctSorted([...grants, grants[0] as PolicyGrant]);
    const page = selectPage(ordered, { offset: 1, limit: 2 }, now);
    expect(page.page.map((g) => g.metadata.uid)).toEqual(['b', 'c']);
    expect(page.paginationInfo).toEqual({ offset: 1, limit: 2, totalHits: 4 });
    const active = selectPage(ordered, { offset: 0, limit: 50, status: 'ACTIVE' }, now);
    expect(active.page.map((g) => g.metadata.uid)).toEqual(['b', 'c', 'd']);
    expect(active.paginationInfo.totalHits).toBe(3);
    expect(selectPage(ordered, { offset: 10, limit: 5 }, now)).toEqual({
      page: [],
      paginationInfo: { offset: 10, limit: 5, totalHits: 4 },
    });
  });
});
