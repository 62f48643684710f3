import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import type { Relationship, RelationshipUpdate } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import {
  freshResync,
  individual,
  metricValue,
  relationshipsOn,
  userCan,
  useControllerFixture,
} from './support/harness.js';

// Drift in either direction, made behind the controller's back directly in SpiceDB, is repaired by the
// periodic resync (3 s here) and counted in policygrant_drift_repaired_total.

const fixture = useControllerFixture('drift');

const driftRepaired = (direction: 'missing' | 'orphan') =>
  metricValue(fixture.controller, 'policygrant_drift_repaired_total', { direction });

function consumer(
  itemId: string,
  userId: string,
  expiresAt = new Date(Date.now() + 3_600_000),
): Relationship {
  return {
    resource: { type: 'resource', id: encodeObjectId(itemId) },
    relation: 'api_consumer',
    subject: { type: 'user', id: encodeObjectId(userId) },
    expiresAt,
  };
}

const touch = (relationship: Relationship): RelationshipUpdate => ({ operation: 'touch', relationship });

async function enforcedGrant() {
  const item = await fixture.resources.createItem();
  const spec = individual(item.spec.itemId);
  const { name } = await fixture.resources.createGrant(fixture.aclNamespace, spec);
  const grant = await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
  return { item, spec, grant };
}

describe('the resync', () => {
  it('removes an orphan grant tuple that no grant accounts for', async () => {
    const { item } = await enforcedGrant();
    const intruder = randomUUID();
    const before = await driftRepaired('orphan');
    // The write's token says it landed; a check here could already come after the resync that removes it.
    expect(
      await fixture.spicedb.client.writeRelationships([touch(consumer(item.spec.itemId, intruder))]),
    ).not.toBe('');

    await expect
      .poll(() => userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', intruder))
      .toBe(false);
    await expect.poll(() => driftRepaired('orphan')).toBeGreaterThan(before);
  });

  it('restores a grant tuple deleted directly from SpiceDB', async () => {
    const { item, spec } = await enforcedGrant();
    const before = await driftRepaired('missing');
    await fixture.spicedb.client.writeRelationships([
      { operation: 'delete', relationship: consumer(item.spec.itemId, spec.userId) },
    ]);
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId)).toBe(false);

    await expect
      .poll(() => userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId))
      .toBe(true);
    await expect.poll(() => driftRepaired('missing')).toBeGreaterThan(before);
  });

  it("puts back a grant tuple's expiration when it was changed", async () => {
    const { item, spec } = await enforcedGrant();
    await fixture.spicedb.client.writeRelationships([
      touch(consumer(item.spec.itemId, spec.userId, new Date('2099-01-01T00:00:00Z'))),
    ]);

    await expect
      .poll(async () =>
        (await relationshipsOn(fixture.spicedb.client, item.spec.itemId))
          .find((r) => r.relation === 'api_consumer')
          ?.expiresAt?.toISOString(),
      )
      .toBe(new Date(spec.expiryTime).toISOString());
  });

  it('removes orphan and restores missing owner relationships', async () => {
    const item = await fixture.resources.createItem();
    const stranger = randomUUID();
    await fixture.spicedb.client.writeRelationships([
      touch({
        resource: { type: 'resource', id: encodeObjectId(item.spec.itemId) },
        relation: 'owner',
        subject: { type: 'user', id: stranger },
      }),
      {
        operation: 'delete',
        relationship: {
          resource: { type: 'resource', id: encodeObjectId(item.spec.itemId) },
          relation: 'owner',
          subject: { type: 'user', id: item.spec.ownerId },
        },
      },
    ]);
    await expect
      .poll(async () =>
        (await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).map((r) => r.subject.id).sort(),
      )
      .toEqual([item.spec.organisationId, item.spec.ownerId].sort());
  });

  it('pages through thousands of orphans and deletes them in batches, leaving unmanaged relations alone', async () => {
    const itemId = `urn:dx:item:${randomUUID()}`;
    const orphans = Array.from({ length: 2_500 }, () => touch(consumer(itemId, randomUUID())));
    const unmanaged: Relationship = {
      resource: { type: 'resource', id: encodeObjectId(itemId) },
      relation: 'editor',
      subject: { type: 'user', id: randomUUID() },
    };
    const before = await driftRepaired('orphan');
    await fixture.spicedb.client.writeRelationshipsInBatches([...orphans, touch(unmanaged)]);

    await expect.poll(() => relationshipsOn(fixture.spicedb.client, itemId)).toEqual([unmanaged]);
    await expect.poll(() => driftRepaired('orphan')).toBe(before + 2_500);
  });

  it('never touches what the grants account for: a resync that saw the grant repairs nothing, and it checks true', async () => {
    const { item, spec } = await enforcedGrant();
    const report = await freshResync(fixture.controller);
    expect(report.desired).toBeGreaterThan(0);
    expect(report).toMatchObject({ missing: 0, orphan: 0 });
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId)).toBe(true);
  });
});
