import { describe, expect, it } from 'vitest';
import {
  claimKeys,
  claimName,
  describeSubject,
  judgeClaim,
  type ClaimData,
} from '../../../../src/acl/policies/grant-claims.js';

const user = '0b5c3a9e-8f0e-4a59-9d0a-3f4b7c2e1d00';
const [orgA, orgB] = ['11111111-2222-4333-8444-555555555555', '66666666-7777-4888-9999-000000000000'];
const now = new Date('2026-06-01T12:00:00Z');

describe('claim keys and names', () => {
  it('INDIVIDUAL: one key per access type for the user', () => {
    expect(
      claimKeys({
        policyType: 'INDIVIDUAL',
        userId: user,
        itemId: 'urn:i',
        constraints: { access: [{ accessType: 'api' }, { accessType: 'file' }] },
      }),
    ).toEqual([
      { subject: `user:${user}`, itemId: 'urn:i', accessType: 'api' },
      { subject: `user:${user}`, itemId: 'urn:i', accessType: 'file' },
    ]);
  });

  it('GROUP: one key per organisation and access type', () => {
    const keys = claimKeys({
      policyType: 'GROUP',
      itemId: 'urn:i',
      constraints: {
        access: [{ accessType: 'api' }, { accessType: 'sub' }],
        subjects: { allowedOrgIds: [orgA, orgB] },
      },
    });
    expect(keys.map((key) => `${key.subject}|${key.accessType}`)).toEqual([
      `organization:${orgA}|api`,
      `organization:${orgA}|sub`,
      `organization:${orgB}|api`,
      `organization:${orgB}|sub`,
    ]);
  });

  it('names are deterministic, distinct per triple, and valid object names', () => {
    const key = { subject: `user:${user}` as const, itemId: 'urn:dx:item:1', accessType: 'api' };
    expect(claimName(key)).toBe(claimName({ ...key }));
    expect(claimName(key)).toMatch(/^claim-[0-9a-f]{64}$/);
    const others = [
      { ...key, accessType: 'file' },
      { ...key, itemId: 'urn:dx:item:2' },
      { ...key, subject: `organization:${user}` as const },
    ];
    expect(new Set([key, ...others].map(claimName)).size).toBe(4);
  });

  it('describes subjects for 409 details', () => {
    expect(describeSubject(`user:${user}`)).toBe(`user ${user}`);
    expect(describeSubject(`organization:${orgA}`)).toBe(`members of organisation ${orgA}`);
  });
});

describe('judging an existing claim', () => {
  const claim = (data: Partial<ClaimData>): Partial<ClaimData> => ({
    grantName: 'pg-holder',
    state: 'bound',
    ...data,
  });
  const judge = (data: Partial<ClaimData>, holderEffective: boolean) =>
    judgeClaim({
      claim: claim(data),
      holderEffective,
      ownGrantName: 'pg-mine',
      now,
      pendingTimeoutMs: 60_000,
    });

  it('a claim naming this request’s grant is its own (retry or twin)', () => {
    expect(judge({ grantName: 'pg-mine' }, false)).toBe('own');
  });

  it('an effective holder blocks, whatever the claim state', () => {
    expect(judge({ state: 'bound' }, true)).toBe('active');
    expect(judge({ state: 'pending', pendingSince: '2020-01-01T00:00:00Z' }, true)).toBe('active');
  });

  it('a holder that is missing or not effective (revoked, expired, refused): vacant once settled', () => {
    expect(judge({ state: 'bound' }, false)).toBe('vacant');
    expect(judge({ state: 'pending', pendingSince: '2026-06-01T11:58:59Z' }, false)).toBe('vacant');
  });

  it('a recent pending claim is in flight, with or without an effective grant: only the bind settles it', () => {
    const recent = { state: 'pending' as const, pendingSince: '2026-06-01T11:59:30Z' };
    expect(judge(recent, false)).toBe('in-flight');
    expect(judge(recent, true)).toBe('in-flight');
    expect(judge({ ...recent, state: 'bound' }, true)).toBe('active');
  });

  it('a claim whose data was damaged is vacant', () => {
    expect(judge({ state: 'pending', pendingSince: 'yesterday' }, false)).toBe('vacant');
    expect(
      judgeClaim({ claim: {}, holderEffective: false, ownGrantName: 'pg-mine', now, pendingTimeoutMs: 1 }),
    ).toBe('vacant');
  });
});
