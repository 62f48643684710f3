import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import type { Relationship, RelationshipUpdate } from '../../../src/spicedb/client.js';
import { encodeObjectId, groupObjectId } from '../../../src/spicedb/object-id.js';
import { testSpiceDB, uniqueId } from '../support/cluster.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';
import { sleep } from '../../../dev/wait/sleep.js';

// An agent's check is one SpiceDB check of the schema's intersection: the delegation AND its owner's access
// now. Relationships are written here as the delegation controller projects them (docs/controller.md,
// "Delegation"); every check carries the token of the last write, so each answer is about that write.
let client: SpiceDBClient;
let service: DecisionServiceUnderTest;

beforeAll(async () => {
  client = new SpiceDBClient({ ...testSpiceDB(), transport: 'plaintext' });
  service = await startServiceUnderTest({ spicedb: testSpiceDB() });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
  client?.close();
});

const inAnHour = () => new Date(Date.now() + 3_600_000);
const touch = (relationship: Relationship): RelationshipUpdate => ({ operation: 'touch', relationship });
const remove = (relationship: Relationship): RelationshipUpdate => ({ operation: 'delete', relationship });

interface Parties {
  itemId: string;
  resource: Relationship['resource'];
  owner: string;
  agent: string;
}

function newParties(): Parties {
  const itemId = `urn:dx:item:${uniqueId('delegated')}`;
  return {
    itemId,
    resource: { type: 'resource', id: encodeObjectId(itemId) },
    owner: uniqueId('owner'),
    agent: `urn:dx:agent:${uniqueId('agent')}`,
  };
}

/** The ownership relationships: agent#owner, and its reverse user#agent that the intersection walks. */
function ownership({ owner, agent }: Parties): Relationship[] {
  const agentObject = { type: 'agent', id: encodeObjectId(agent) };
  const ownerObject = { type: 'user', id: owner };
  return [
    { resource: agentObject, relation: 'owner', subject: ownerObject },
    { resource: ownerObject, relation: 'agent', subject: agentObject },
  ];
}

function delegation(parties: Parties, relation: string, expiresAt = inAnHour()): Relationship {
  return {
    resource: parties.resource,
    relation: `${relation}_delegate`,
    subject: { type: 'agent', id: encodeObjectId(parties.agent) },
    expiresAt,
  };
}

function ownerHolds(parties: Parties, relation: string, expiresAt?: Date): Relationship {
  return {
    resource: parties.resource,
    relation,
    subject: { type: 'user', id: parties.owner },
    ...(expiresAt ? { expiresAt } : {}),
  };
}

async function write(...updates: RelationshipUpdate[]): Promise<string> {
  return client.writeRelationships(updates);
}

async function agentAllowed(parties: Parties, relation: string, consistencyToken: string): Promise<boolean> {
  const { status, body } = await service.check({
    subject_type: 'agent',
    subject_id: parties.agent,
    resource_type: 'resource',
    resource_id: parties.itemId,
    relation,
    consistency_token: consistencyToken,
  });
  expect(status).toBe(200);
  expect(body.result).toMatchObject({ subject: { type: 'agent', id: parties.agent }, relation });
  return body.result.allowed;
}

describe('POST /v1/check of an agent against the real SpiceDB', () => {
  it('allows a delegated viewer while the owner views, and denies once the owner no longer does', async () => {
    const parties = newParties();
    const viewing = ownerHolds(parties, 'direct_viewer');
    const granted = await write(...ownership(parties).map(touch), touch(viewing));
    expect(await agentAllowed(parties, 'delegated_viewer', granted)).toBe(false); // no delegation yet

    const delegated = await write(touch(delegation(parties, 'viewer')));
    expect(await agentAllowed(parties, 'delegated_viewer', delegated)).toBe(true);
    expect(await agentAllowed(parties, 'delegated_editor', delegated)).toBe(false);
    expect(await agentAllowed(parties, 'delegated_querier', delegated)).toBe(false);

    const ownerLostIt = await write(remove(viewing));
    expect(await agentAllowed(parties, 'delegated_viewer', ownerLostIt)).toBe(false);
  });

  it('denies once the delegation is revoked, while the owner keeps the access', async () => {
    const parties = newParties();
    await write(...ownership(parties).map(touch), touch(ownerHolds(parties, 'editor')));
    const delegated = await write(touch(delegation(parties, 'editor')));
    expect(await agentAllowed(parties, 'delegated_editor', delegated)).toBe(true);
    // every editor is a viewer, but a delegation is of one relation only
    expect(await agentAllowed(parties, 'delegated_viewer', delegated)).toBe(false);

    const revoked = await write(remove(delegation(parties, 'editor')));
    expect(await agentAllowed(parties, 'delegated_editor', revoked)).toBe(false);
  });

  it('denies a delegated editor whose owner only views', async () => {
    const parties = newParties();
    const token = await write(
      ...ownership(parties).map(touch),
      touch(ownerHolds(parties, 'direct_viewer')),
      touch(delegation(parties, 'editor')),
    );
    expect(await agentAllowed(parties, 'delegated_editor', token)).toBe(false);
  });

  it('allows a delegated querier while the owner holds an api grant, through an organisation too', async () => {
    const parties = newParties();
    const organisationId = uniqueId('org');
    const membership: Relationship = {
      resource: { type: 'organization', id: organisationId },
      relation: 'member',
      subject: { type: 'user', id: parties.owner },
    };
    const token = await write(
      ...ownership(parties).map(touch),
      touch(membership),
      touch({
        resource: parties.resource,
        relation: 'api_consumer',
        subject: { type: 'organization', id: organisationId, relation: 'member' },
        expiresAt: inAnHour(),
      }),
      touch(delegation(parties, 'querier')),
    );
    expect(await agentAllowed(parties, 'delegated_querier', token)).toBe(true);

    const leftTheOrganisation = await write(remove(membership));
    expect(await agentAllowed(parties, 'delegated_querier', leftTheOrganisation)).toBe(false);
  });

  it('reaches the owner through a group that views the item', async () => {
    const parties = newParties();
    const group = groupObjectId(uniqueId('org'), 'analysts');
    const token = await write(
      ...ownership(parties).map(touch),
      touch({
        resource: { type: 'group', id: group },
        relation: 'member',
        subject: { type: 'user', id: parties.owner },
      }),
      touch({
        resource: parties.resource,
        relation: 'direct_viewer',
        subject: { type: 'group', id: group, relation: 'member' },
      }),
      touch(delegation(parties, 'viewer')),
    );
    expect(await agentAllowed(parties, 'delegated_viewer', token)).toBe(true);
  });

  it('denies when the delegation or the owner’s grant expires (SpiceDB honours both expirations)', async () => {
    const expiringDelegation = newParties();
    const expiringGrant = newParties();
    const soon = new Date(Date.now() + 3_000);
    await write(
      ...ownership(expiringDelegation).map(touch),
      touch(ownerHolds(expiringDelegation, 'api_consumer', inAnHour())),
      touch(delegation(expiringDelegation, 'querier', soon)),
      ...ownership(expiringGrant).map(touch),
      touch(ownerHolds(expiringGrant, 'api_consumer', soon)),
    );
    const token = await write(touch(delegation(expiringGrant, 'querier')));
    expect(await agentAllowed(expiringDelegation, 'delegated_querier', token)).toBe(true);
    expect(await agentAllowed(expiringGrant, 'delegated_querier', token)).toBe(true);

    await sleep(soon.getTime() - Date.now() + 1_000);
    const later = await write(...ownership(expiringGrant).map(touch));
    expect(await agentAllowed(expiringDelegation, 'delegated_querier', later)).toBe(false);
    expect(await agentAllowed(expiringGrant, 'delegated_querier', later)).toBe(false);
  });

  it('denies an agent whose owner is someone else than the user holding the access', async () => {
    const parties = newParties();
    const someoneElse = uniqueId('viewer');
    const token = await write(
      ...ownership(parties).map(touch),
      touch({
        resource: parties.resource,
        relation: 'direct_viewer',
        subject: { type: 'user', id: someoneElse },
      }),
      touch(delegation(parties, 'viewer')),
    );
    expect(await agentAllowed(parties, 'delegated_viewer', token)).toBe(false);
  });
});
