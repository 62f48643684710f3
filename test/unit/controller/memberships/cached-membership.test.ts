import { describe, expect, it } from 'vitest';
import { isMember } from '../../../../src/api/v1alpha1/index.js';
import { membershipCacheTransform } from '../../../../src/controller/memberships/cached-membership.js';
import { projectMembership } from '../../../../src/controller/memberships/membership-projection.js';
import { InternPool } from '../../../../src/runtime/index.js';
import { membership } from '../support/fakes.js';

function servedMembership(name: string, removedAt?: string) {
  const served = membership(
    name,
    {
      groupId: 'analysts',
      ...(removedAt ? { removedAt } : {}),
      changedAt: '2026-01-01T00:00:00Z',
      appliedEvents: Array.from({ length: 16 }, (_, i) => ({ source: '/hr/events', id: `event-${i}` })),
    },
    {
      labels: { team: 'a' },
      annotations: { note: 'x' },
      finalizers: ['acl.policygrant.dev/relationships'],
      managedFields: [{ manager: 'policy-grant-acl-api', operation: 'Update', fieldsV1: { 'f:spec': {} } }],
    },
  );
  return {
    ...served,
    status: {
      observedGeneration: 1,
      conditions: [
        {
          type: 'Enforced',
          status: 'True' as const,
          reason: 'Projected',
          message: 'written',
          lastTransitionTime: '2026-01-01T00:00:01Z',
          observedGeneration: 1,
        },
      ],
      zedToken: 'GhUKEzE3',
    },
  };
}

describe('membershipCacheTransform', () => {
  it('keeps what the projection, the withdrawal and the status read', () => {
    const transform = membershipCacheTransform(new InternPool());
    for (const served of [servedMembership('m'), servedMembership('r', '2026-02-01T00:00:00Z')]) {
      const cached = transform(structuredClone(served));
      expect(projectMembership(cached.spec)).toEqual(projectMembership(served.spec));
      expect(isMember(cached)).toBe(isMember(served));
      expect(cached.status).toEqual(served.status);
      expect(cached.metadata).toMatchObject({
        name: served.metadata.name,
        namespace: served.metadata.namespace,
        resourceVersion: served.metadata.resourceVersion,
        generation: served.metadata.generation,
        finalizers: served.metadata.finalizers,
      });
    }
  });

  it("drops the ACL API's event bookkeeping, labels, annotations and managedFields", () => {
    const cached = membershipCacheTransform(new InternPool())(servedMembership('m'));
    expect(
      Object.keys(cached.spec).filter((key) => cached.spec[key as keyof typeof cached.spec] !== undefined),
    ).toEqual(['organisationId', 'groupId', 'userId']);
    expect(cached.metadata).not.toHaveProperty('labels');
    expect(cached.metadata).not.toHaveProperty('annotations');
    expect(cached.metadata.managedFields).toBeUndefined();
    expect(JSON.stringify(cached).length).toBeLessThan(JSON.stringify(servedMembership('m')).length / 2);
  });
});
