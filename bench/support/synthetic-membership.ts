import { randomUUID } from 'node:crypto';
import { membershipName, type Membership, type MembershipSpec } from '../../src/api/v1alpha1/index.js';
import { enforcedManagedFields, hex } from './synthetic-fields.js';
import { ACL_NAMESPACE, createdAt } from './synthetic-grant.js';

/** Memberships per organisation; every other one is of a group within it. */
const MEMBERS_PER_ORGANISATION = 100;
const GROUPS_PER_ORGANISATION = 10;

function membershipSpec(index: number, changedAt: string): MembershipSpec {
  const organisation = Math.floor(index / MEMBERS_PER_ORGANISATION);
  return {
    organisationId: `00000000-0000-4000-a000-${hex(organisation, 12)}`,
    ...(index % 2 === 1 && { groupId: `group-${organisation}-${index % GROUPS_PER_ORGANISATION}` }),
    userId: `00000000-0000-4000-8000-${hex(index, 12)}`,
    changedAt,
    appliedEvents: [{ source: 'urn:dx:identity:membership-events', id: randomUUID() }],
  };
}

/**
 * One enforced Membership as the API server serves it after the ACL API created it from a membership event
 * (spec with the event's bookkeeping, no labels) and the controller enforced it (finalizer, status).
 */
export function syntheticMembership(index: number): Membership {
  const created = createdAt(index);
  const spec = membershipSpec(index, created);
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'Membership',
    metadata: {
      name: membershipName(spec),
      namespace: ACL_NAMESPACE,
      uid: randomUUID(),
      resourceVersion: String(2_000_000 + index * 3),
      generation: 1,
      creationTimestamp: created as unknown as Date,
      finalizers: ['acl.policygrant.dev/relationships'],
      managedFields: enforcedManagedFields(
        {
          'f:spec': {
            '.': {},
            'f:appliedEvents': {},
            'f:changedAt': {},
            ...(spec.groupId !== undefined && { 'f:groupId': {} }),
            'f:organisationId': {},
            'f:userId': {},
          },
        },
        {},
        created,
      ) as never,
    },
    spec,
    status: {
      observedGeneration: 1,
      conditions: [
        {
          type: 'Enforced',
          status: 'True',
          reason: 'Projected',
          message: 'membership written to SpiceDB',
          lastTransitionTime: created,
          observedGeneration: 1,
        },
      ],
      zedToken: `GhUKEzE3${hex(index * 7919, 12)}MDAwMDAwMDA=`,
    },
  };
}
