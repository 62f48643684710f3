import { describe, expect, it } from 'vitest';
import {
  isMember,
  membershipKeyString,
  membershipName,
  MembershipSpecSchema,
} from '../../../src/api/v1alpha1/index.js';

const ORG = '0a000000-0000-4000-8000-000000000001';
const USER = '0b000000-0000-4000-8000-000000000002';
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('membership names', () => {
  it('are the same for one key and differ between an organisation and its groups', () => {
    const names = [
      membershipName({ organisationId: ORG, userId: USER }),
      membershipName({ organisationId: ORG, groupId: 'Team.A~1', userId: USER }),
      membershipName({ organisationId: ORG, groupId: 'team.a~1', userId: USER }),
    ];
    expect(membershipName({ organisationId: ORG, userId: USER })).toBe(names[0]);
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name).toMatch(DNS_SUBDOMAIN);
  });

  it('keep the group apart from the organisation in the key string', () => {
    expect(membershipKeyString({ organisationId: ORG, userId: USER })).toBe(`${ORG}||${USER}`);
    expect(membershipKeyString({ organisationId: ORG, groupId: 'g', userId: USER })).toBe(`${ORG}|g|${USER}`);
  });
});

describe('membership spec', () => {
  it('refuses a group id with characters SpiceDB ids or object names would not carry', () => {
    const result = MembershipSpecSchema.safeParse({ organisationId: ORG, groupId: 'a|b', userId: USER });
    expect(result.success).toBe(false);
  });

  it('counts a membership only while it is not removed or being deleted', () => {
    const spec = { organisationId: ORG, userId: USER };
    expect(isMember({ spec, metadata: {} })).toBe(true);
    expect(isMember({ spec: { ...spec, removedAt: '2026-01-01T00:00:00Z' }, metadata: {} })).toBe(false);
    expect(isMember({ spec, metadata: { deletionTimestamp: new Date() } })).toBe(false);
  });
});
