import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EnforcedReason, type MembershipSpec } from '../../../src/api/v1alpha1/index.js';
import { projectMembership } from '../../../src/controller/memberships/membership-projection.js';
import { tupleKey } from '../../../src/verdict/tuple-key.js';
import type { Relationship, SpiceDBClient } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import {
  enforcedCondition,
  group,
  metricValue,
  relationshipsOn,
  userCan,
  useControllerFixture,
} from './support/harness.js';

// Memberships of the ACL namespace projected into SpiceDB: organisation and group members, a group's owner;
// GROUP grants then allow members; removal and deletion take the tuples away; the resync repairs membership
// drift without touching grant tuples.

const fixture = useControllerFixture('memberships');

const acl = () => fixture.aclNamespace;

/** Whether SpiceDB holds the tuple, read fully consistent. */
async function holds(client: SpiceDBClient, relationship: Relationship): Promise<boolean> {
  const { resource, relation, subject } = relationship;
  const filter = {
    resourceType: resource.type,
    resourceId: resource.id,
    relation,
    subject: { type: subject.type, id: subject.id },
  };
  for await (const page of client.readRelationships(filter, { consistency: { fullyConsistent: true } })) {
    if (page.relationships.length > 0) return true;
  }
  return false;
}

const holdsAll = async (spec: MembershipSpec) =>
  (
    await Promise.all(
      projectMembership(spec).map((relationship) => holds(fixture.spicedb.client, relationship)),
    )
  ).every(Boolean);
const holdsAny = async (spec: MembershipSpec) =>
  (
    await Promise.all(
      projectMembership(spec).map((relationship) => holds(fixture.spicedb.client, relationship)),
    )
  ).some(Boolean);

describe('an organisation Membership', () => {
  it('makes a GROUP grant allow the member until it is removed', async () => {
    const item = await fixture.resources.createItem();
    const [organisationId, userId] = [randomUUID(), randomUUID()];
    const grant = await fixture.resources.createGrant(acl(), group(item.spec.itemId, [organisationId]));
    await fixture.resources.waitForReason(acl(), grant.name, EnforcedReason.Projected);
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', userId)).toBe(false);

    const { name } = await fixture.resources.createMembership(acl(), { organisationId, userId });
    const member = await fixture.resources.waitForMembershipReason(acl(), name, 'Projected');
    expect(enforcedCondition(member)?.status).toBe('True');
    expect(member.status?.zedToken).toBeTruthy();
    expect(member.metadata.finalizers).toContain('acl.policygrant.dev/relationships');
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', userId, member)).toBe(
      true,
    );

    await fixture.resources.removeMembership(acl(), name);
    const removed = await fixture.resources.waitForMembershipReason(acl(), name, 'Removed');
    expect(enforcedCondition(removed)?.status).toBe('False');
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', userId, removed)).toBe(
      false,
    );
    expect(await holdsAny({ organisationId, userId })).toBe(false);
    expect(
      await metricValue(fixture.controller, 'controller_runtime_reconcile_total', {
        controller: 'membership',
      }),
    ).toBeGreaterThan(0);
  });

  it('takes its tuple away when the object is deleted, then lets the object go', async () => {
    const spec = { organisationId: randomUUID(), userId: randomUUID() };
    const { name } = await fixture.resources.createMembership(acl(), spec);
    await fixture.resources.waitForMembershipReason(acl(), name, 'Projected');
    expect(await holdsAll(spec)).toBe(true);

    await fixture.resources.deleteMembership(acl(), name);
    await expect.poll(() => fixture.resources.membershipExists(acl(), name)).toBe(false);
    expect(await holdsAny(spec)).toBe(false);
  });

  it('counts only in the ACL namespace', async () => {
    const elsewhere = await fixture.resources.namespace('not-acl');
    const spec = { organisationId: randomUUID(), userId: randomUUID() };
    const { name } = await fixture.resources.createMembership(elsewhere, spec);
    // A membership in the ACL namespace created afterwards is projected: the other had its chance.
    await fixture.resources.addMember(acl(), randomUUID(), randomUUID());

    expect(await holdsAny(spec)).toBe(false);
    expect(enforcedCondition(await fixture.resources.getMembership(elsewhere, name))).toBeUndefined();
  });
});

describe('a group Membership', () => {
  it('makes the user a member of the group within its organisation, which owns the group', async () => {
    const organisationId = randomUUID();
    const spec = { organisationId, groupId: 'data.team', userId: randomUUID() };
    const other = { ...spec, userId: randomUUID() };
    const [first, second] = [
      await fixture.resources.createMembership(acl(), spec),
      await fixture.resources.createMembership(acl(), other),
    ];
    await fixture.resources.waitForMembershipReason(acl(), first.name, 'Projected');
    await fixture.resources.waitForMembershipReason(acl(), second.name, 'Projected');
    const [memberTuple, ownerTuple] = projectMembership(spec).map(tupleKey);
    expect(memberTuple).toBe(
      `group:${encodeObjectId(organisationId)}|data=2Eteam#member@user:${spec.userId}`,
    );
    expect(ownerTuple).toBe(
      `group:${encodeObjectId(organisationId)}|data=2Eteam#owner@organization:${organisationId}`,
    );
    expect(await holdsAll(spec)).toBe(true);

    // The group's ownership stays while a member remains, and goes with the last one.
    await fixture.resources.removeMembership(acl(), first.name);
    await fixture.resources.waitForMembershipReason(acl(), first.name, 'Removed');
    expect(await holdsAll(other)).toBe(true);
    await fixture.resources.removeMembership(acl(), second.name);
    await fixture.resources.waitForMembershipReason(acl(), second.name, 'Removed');
    expect(await holdsAny(spec)).toBe(false);
    expect(await holdsAny(other)).toBe(false);
  });
});

describe('the resync of memberships', () => {
  it('writes a missing membership tuple and deletes an orphan one, and leaves grant tuples alone', async () => {
    const item = await fixture.resources.createItem();
    const spec = { organisationId: randomUUID(), userId: randomUUID() };
    const grant = await fixture.resources.createGrant(acl(), group(item.spec.itemId, [spec.organisationId]));
    await fixture.resources.waitForReason(acl(), grant.name, EnforcedReason.Projected);
    await fixture.resources.addMember(acl(), spec.organisationId, spec.userId);
    const grantTuples = (await relationshipsOn(fixture.spicedb.client, item.spec.itemId))
      .map(tupleKey)
      .sort();
    const [memberTuple] = projectMembership(spec) as [Relationship];
    const stranger = { organisationId: spec.organisationId, groupId: 'intruders', userId: randomUUID() };

    await fixture.spicedb.client.writeRelationships([
      { operation: 'delete', relationship: memberTuple },
      ...projectMembership(stranger).map((relationship) => ({ operation: 'touch' as const, relationship })),
    ]);
    expect(await holds(fixture.spicedb.client, memberTuple)).toBe(false);

    await expect.poll(() => holdsAll(spec)).toBe(true);
    await expect.poll(() => holdsAny(stranger)).toBe(false);
    expect((await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).map(tupleKey).sort()).toEqual(
      grantTuples,
    );
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId)).toBe(true);
  });
});
