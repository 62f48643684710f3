import { describe, expect, it } from 'vitest';
import { projectMembership } from '../../../../src/controller/memberships/membership-projection.js';
import { membershipKind } from '../../../../src/controller/memberships/membership-projection.js';
import { parseTupleKey, tupleKey } from '../../../../src/verdict/tuple-key.js';
import { InvalidObjectIdError } from '../../../../src/spicedb/object-id.js';
import { ORG_A, USER } from '../support/fakes.js';

const isMembershipTuple = (key: string) => {
  const { resource, relation } = parseTupleKey(key);
  return membershipKind.relations.some(
    (managed) => managed.objectType === resource.type && managed.relation === relation,
  );
};

describe('the projection of a membership', () => {
  it('makes an organisation member a member of the organisation', () => {
    expect(projectMembership({ organisationId: ORG_A, userId: USER }).map(tupleKey)).toEqual([
      `organization:${ORG_A}#member@user:${USER}`,
    ]);
  });

  it('makes a group member a member of the group within its organisation, which owns the group', () => {
    expect(
      projectMembership({ organisationId: ORG_A, groupId: 'data.team~1', userId: USER }).map(tupleKey),
    ).toEqual([
      `group:${ORG_A}|data=2Eteam=7E1#member@user:${USER}`,
      `group:${ORG_A}|data=2Eteam=7E1#owner@organization:${ORG_A}`,
    ]);
  });

  it('refuses an id that cannot be a SpiceDB object id', () => {
    expect(() => projectMembership({ organisationId: ORG_A, userId: '' })).toThrow(InvalidObjectIdError);
  });

  it('tells membership tuples from the others', () => {
    const [member, owner] = projectMembership({ organisationId: ORG_A, groupId: 'g', userId: USER }).map(
      tupleKey,
    );
    expect([member, owner].map((key) => isMembershipTuple(key ?? ''))).toEqual([true, true]);
    expect(isMembershipTuple(`organization:${ORG_A}#member@user:${USER}`)).toBe(true);
    expect(isMembershipTuple(`resource:r#owner@organization:${ORG_A}`)).toBe(false);
    expect(isMembershipTuple(`resource:r#api_consumer@organization:${ORG_A}#member`)).toBe(false);
  });
});
