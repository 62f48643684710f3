import { isMember, type Membership, type MembershipSpec } from '../../api/v1alpha1/index.js';
import type { Relationship } from '../../spicedb/client.js';
import { encodeObjectId, groupObjectId } from '../../spicedb/object-id.js';
import type { ProjectionRules } from '../projected/projection-rules.js';

// The pure projection of a Membership onto SpiceDB relationships (schema.zed: `organization#member`,
// `group#member`, `group#owner`).

export const ORGANISATION_OBJECT_TYPE = 'organization';
export const GROUP_OBJECT_TYPE = 'group';
export const MEMBER_RELATION = 'member';
export const GROUP_OWNER_RELATION = 'owner';

/** The relations the Membership controller is the only writer of: the resync manages exactly these for it. */
export const MEMBERSHIP_RELATIONS = [
  { objectType: ORGANISATION_OBJECT_TYPE, relation: MEMBER_RELATION },
  { objectType: GROUP_OBJECT_TYPE, relation: MEMBER_RELATION },
  { objectType: GROUP_OBJECT_TYPE, relation: GROUP_OWNER_RELATION },
] as const;

type MembershipIds = Pick<MembershipSpec, 'organisationId' | 'groupId' | 'userId'>;

/**
 * What a member gives: `organization:<org>#member@user:<u>` for an organisation member;
 * `group:<org>|<group>#member@user:<u>` and the group's ownership `group:<org>|<group>#owner@organization:<org>`
 * for a group member. Ids are encoded (object-id.ts); throws InvalidObjectIdError for an id that cannot be one.
 */
export function projectMembership(spec: MembershipIds): Relationship[] {
  const user = { type: 'user', id: encodeObjectId(spec.userId) };
  const organisation = { type: ORGANISATION_OBJECT_TYPE, id: encodeObjectId(spec.organisationId) };
  if (spec.groupId === undefined)
    return [{ resource: organisation, relation: MEMBER_RELATION, subject: user }];
  const group = { type: GROUP_OBJECT_TYPE, id: groupObjectId(spec.organisationId, spec.groupId) };
  return [
    { resource: group, relation: MEMBER_RELATION, subject: user },
    { resource: group, relation: GROUP_OWNER_RELATION, subject: organisation },
  ];
}

/** The Enforced reason of a membership that no longer counts: removed, or being deleted. */
export const REMOVED_REASON = 'Removed';

export const membershipKind: ProjectionRules<Membership> = {
  name: 'membership',
  relations: MEMBERSHIP_RELATIONS,
  project: (membership) => projectMembership(membership.spec),
  withdrawal: (membership) =>
    isMember(membership) ? undefined : { reason: REMOVED_REASON, message: 'membership deleted from SpiceDB' },
};
