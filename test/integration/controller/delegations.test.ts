import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import { projectDelegation } from '../../../src/controller/delegations/delegation-projection.js';
import type { Relationship, SpiceDBClient } from '../../../src/spicedb/client.js';
import { loadRegistry } from '../../../src/spicedb/registry.js';
import { agentCan, DelegationResources, querierDelegation } from './support/delegations.js';
import {
  enforcedCondition,
  freshResync,
  individual,
  metricValue,
  useControllerFixture,
} from './support/harness.js';

// Delegations of the ACL namespace projected into SpiceDB: the delegated relation (expiring) and the agent's
// ownership; an agent is allowed only while the delegation counts AND its owner holds the access (the grant
// the controller projects); revocation, expiry and deletion take the delegation away; one owner per agent;
// the resync repairs delegation drift.

const fixture = useControllerFixture('delegations');
const registry = loadRegistry();
const delegations = () => new DelegationResources(fixture.aclNamespace);

async function holds(client: SpiceDBClient, relationship: Relationship): Promise<boolean> {
  const { resource, relation, subject } = relationship;
  const filter = { resourceType: resource.type, resourceId: resource.id, relation, subject };
  for await (const page of client.readRelationships(filter, { consistency: { fullyConsistent: true } })) {
    if (page.relationships.length > 0) return true;
  }
  return false;
}

const repairedMissing = () =>
  metricValue(fixture.controller, 'policygrant_drift_repaired_total', { direction: 'missing' });

const holdsAll = async (relationships: (Relationship | undefined)[]) =>
  (
    await Promise.all(
      relationships.map(
        (relationship) => relationship !== undefined && holds(fixture.spicedb.client, relationship),
      ),
    )
  ).every(Boolean);

/** An item and an enforced INDIVIDUAL api grant on it to a new owner. */
async function ownerWithApiGrant() {
  const item = await fixture.resources.createItem();
  const grant = await fixture.resources.createGrant(fixture.aclNamespace, individual(item.spec.itemId));
  await fixture.resources.waitForReason(fixture.aclNamespace, grant.name, EnforcedReason.Projected);
  return { itemId: item.spec.itemId, ownerId: grant.spec.userId, grantName: grant.name };
}

describe('a Delegation', () => {
  it('lets the agent query while the owner holds the api grant, and not once the owner lost it', async () => {
    const { itemId, ownerId, grantName } = await ownerWithApiGrant();
    const spec = querierDelegation(itemId, ownerId);
    await delegations().claimAgent(spec.agentId, ownerId);
    const name = await delegations().create(spec);

    const projected = await delegations().waitForReason(name, 'Projected');
    expect(enforcedCondition(projected)?.status).toBe('True');
    expect(projected.metadata.finalizers).toContain('acl.policygrant.dev/relationships');
    const allowed = await agentCan(
      fixture.spicedb.client,
      itemId,
      'delegated_querier',
      spec.agentId,
      projected.status?.zedToken,
    );
    expect(allowed).toBe(true);

    await fixture.resources.revoke(fixture.aclNamespace, grantName);
    const revoked = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      grantName,
      EnforcedReason.Revoked,
    );
    expect(
      await agentCan(
        fixture.spicedb.client,
        itemId,
        'delegated_querier',
        spec.agentId,
        revoked.status?.zedToken,
      ),
    ).toBe(false);
  });

  it('is taken away on revocation, keeping the agent’s ownership while another delegation counts', async () => {
    const { itemId, ownerId } = await ownerWithApiGrant();
    const first = querierDelegation(itemId, ownerId);
    const second = { ...first, itemId: (await fixture.resources.createItem()).spec.itemId };
    await delegations().claimAgent(first.agentId, ownerId);
    const [firstName, secondName] = [await delegations().create(first), await delegations().create(second)];
    await delegations().waitForReason(firstName, 'Projected');
    await delegations().waitForReason(secondName, 'Projected');

    await delegations().revoke(firstName);
    const revoked = await delegations().waitForReason(firstName, 'Revoked');
    expect(enforcedCondition(revoked)?.status).toBe('False');
    const [delegated, ...ownership] = projectDelegation(first, registry);
    expect(await holdsAll([delegated])).toBe(false);
    expect(await holdsAll(ownership)).toBe(true);
    expect(
      await agentCan(
        fixture.spicedb.client,
        itemId,
        'delegated_querier',
        first.agentId,
        revoked.status?.zedToken,
      ),
    ).toBe(false);

    await delegations().delete(secondName);
    await expect.poll(() => delegations().exists(secondName)).toBe(false);
    for (const relationship of projectDelegation(second, registry)) {
      expect(await holds(fixture.spicedb.client, relationship)).toBe(false);
    }
  });

  it('expires: Projected, then Expired with its tuple gone', async () => {
    const { itemId, ownerId } = await ownerWithApiGrant();
    const spec = querierDelegation(itemId, ownerId, {
      expiryTime: new Date(Date.now() + 8_000).toISOString(),
    });
    await delegations().claimAgent(spec.agentId, ownerId);
    const name = await delegations().create(spec);
    await delegations().waitForReason(name, 'Projected');

    await delegations().waitForReason(name, 'Expired');
    expect(await holdsAll(projectDelegation(spec, registry).slice(0, 1))).toBe(false);
    expect(await agentCan(fixture.spicedb.client, itemId, 'delegated_querier', spec.agentId)).toBe(false);
  });

  it('gives nothing when the agent belongs to another user, or has no Agent object', async () => {
    const { itemId, ownerId } = await ownerWithApiGrant();
    const spec = querierDelegation(itemId, ownerId);
    await delegations().claimAgent(spec.agentId, randomUUID());
    const claimedByAnother = await delegations().create(spec);
    const unclaimed = await delegations().create(querierDelegation(itemId, ownerId));

    const refused = await delegations().waitForReason(claimedByAnother, 'NotOwner');
    expect(enforcedCondition(refused)?.message).toMatch(/another user/);
    expect(enforcedCondition(await delegations().waitForReason(unclaimed, 'NotOwner'))?.message).toMatch(
      /no Agent object/,
    );
    for (const relationship of projectDelegation(spec, registry)) {
      expect(await holds(fixture.spicedb.client, relationship)).toBe(false);
    }
  });

  it('is repaired by the resync when its tuples go missing from SpiceDB', async () => {
    const { itemId, ownerId } = await ownerWithApiGrant();
    const spec = querierDelegation(itemId, ownerId);
    await delegations().claimAgent(spec.agentId, ownerId);
    await delegations().waitForReason(await delegations().create(spec), 'Projected');
    const projected = projectDelegation(spec, registry);
    const repairedBefore = await repairedMissing();
    await fixture.spicedb.client.writeRelationships(
      projected.map((relationship) => ({ operation: 'delete' as const, relationship })),
    );

    await freshResync(fixture.controller);
    expect((await repairedMissing()) - repairedBefore).toBeGreaterThanOrEqual(projected.length);
    for (const relationship of projected)
      expect(await holds(fixture.spicedb.client, relationship)).toBe(true);
    expect(await agentCan(fixture.spicedb.client, itemId, 'delegated_querier', spec.agentId)).toBe(true);
  });
});
