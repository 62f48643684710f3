import { describe, expect, it } from 'vitest';
import { checkKeys, MEMBERSHIPS_KEY, relationshipKeys } from '../../../src/decision/revision-keys.js';

describe('revision keys', () => {
  it('marks both ends of a changed relationship: a membership marks the organisation and the user', () => {
    expect(
      relationshipKeys({
        resource: { type: 'organization', id: 'o' },
        relation: 'member',
        subject: { type: 'user', id: 'u' },
      }),
    ).toEqual(['organization:o', 'user:u', MEMBERSHIPS_KEY]);
  });

  it('marks a grant to an organisation’s members by the resource and the organisation', () => {
    expect(
      relationshipKeys({
        resource: { type: 'resource', id: 'r' },
        relation: 'api_consumer',
        subject: { type: 'organization', id: 'o', relation: 'member' },
      }),
    ).toEqual(['resource:r', 'organization:o']);
  });

  it('looks a check up by its resource and its subject, so a membership change reaches the member’s checks', () => {
    const keys = checkKeys({ resource: { type: 'resource', id: 'r' }, subject: { type: 'user', id: 'u' } });
    expect(keys).toEqual(['resource:r', 'user:u', 'resource:r u']);
    const membership = relationshipKeys({
      resource: { type: 'group', id: 'o|g' },
      relation: 'member',
      subject: { type: 'user', id: 'u' },
    });
    expect(keys.some((key) => membership.includes(key))).toBe(true);
  });

  it('looks an agent check up by the memberships too: the owner’s membership lies between resource and agent', () => {
    const keys = checkKeys({ resource: { type: 'resource', id: 'r' }, subject: { type: 'agent', id: 'a' } });
    const ownersMembership = relationshipKeys({
      resource: { type: 'organization', id: 'o' },
      relation: 'member',
      subject: { type: 'user', id: 'owner' },
    });
    expect(keys.some((key) => ownersMembership.includes(key))).toBe(true);
    expect(
      checkKeys({ resource: { type: 'resource', id: 'r' }, subject: { type: 'user', id: 'u' } }),
    ).not.toContain(MEMBERSHIPS_KEY);
  });

  it('marks a delegation and an ownership by their ends, which the agent check looks up', () => {
    const keys = checkKeys({ resource: { type: 'resource', id: 'r' }, subject: { type: 'agent', id: 'a' } });
    const delegation = relationshipKeys({
      resource: { type: 'resource', id: 'r' },
      relation: 'viewer_delegate',
      subject: { type: 'agent', id: 'a' },
    });
    const ownership = relationshipKeys({
      resource: { type: 'user', id: 'owner' },
      relation: 'agent',
      subject: { type: 'agent', id: 'a' },
    });
    expect(delegation).toEqual(['resource:r', 'agent:a']);
    expect(keys.some((key) => ownership.includes(key))).toBe(true);
  });

  describe('a relationship from a resource to a user', () => {
    const grant = relationshipKeys({
      resource: { type: 'resource', id: 'r' },
      relation: 'api_consumer',
      subject: { type: 'user', id: 'u' },
    });
    const touches = (check: Parameters<typeof checkKeys>[0]) =>
      checkKeys(check).some((key) => grant.includes(key));

    it('touches that user’s check on that resource, and the resource’s agent checks', () => {
      expect(touches({ resource: { type: 'resource', id: 'r' }, subject: { type: 'user', id: 'u' } })).toBe(
        true,
      );
      expect(touches({ resource: { type: 'resource', id: 'r' }, subject: { type: 'agent', id: 'a' } })).toBe(
        true,
      );
    });

    it('touches no other user’s check on the resource, and none of the user’s checks on other resources', () => {
      expect(touches({ resource: { type: 'resource', id: 'r' }, subject: { type: 'user', id: 'v' } })).toBe(
        false,
      );
      expect(touches({ resource: { type: 'resource', id: 's' }, subject: { type: 'user', id: 'u' } })).toBe(
        false,
      );
      expect(
        touches({
          resource: { type: 'resource', id: 'r' },
          subject: { type: 'group', id: 'o|g', relation: 'member' },
        }),
      ).toBe(false);
    });

    it('is told apart from a grant to an organisation’s members, which touches every check on the resource', () => {
      const organisationGrant = relationshipKeys({
        resource: { type: 'resource', id: 'r' },
        relation: 'api_consumer',
        subject: { type: 'organization', id: 'o', relation: 'member' },
      });
      const userCheck = checkKeys({
        resource: { type: 'resource', id: 'r' },
        subject: { type: 'user', id: 'v' },
      });
      expect(userCheck.some((key) => organisationGrant.includes(key))).toBe(true);
    });
  });
});
