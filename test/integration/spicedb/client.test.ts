import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpiceDBClient, type Relationship, type SubjectRef } from '../../../src/spicedb/client.js';
import { SpiceDBUnavailableError } from '../../../src/spicedb/errors.js';
import { encodeObjectId, groupObjectId } from '../../../src/spicedb/object-id.js';
import { canonicalCheck } from '../../../src/decision/canonical-check.js';
import { loadRegistry } from '../../../src/spicedb/registry.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import { testSpiceDB, uniqueId } from '../support/cluster.js';
import { SHORT_LIFETIME_MS } from '../../support/timeouts.js';
import { sleep } from '../../../dev/wait/sleep.js';

// The shared SpiceDB of the run: every test names its own objects.
const registry = loadRegistry();
let client: SpiceDBClient;

beforeAll(async () => {
  client = new SpiceDBClient({ ...testSpiceDB(), transport: 'plaintext' });
  await client.ensureSchema(readSchemaText());
});

afterAll(() => client.close());

function item(): { type: string; id: string } {
  return { type: 'resource', id: encodeObjectId(`urn:dx:item:${uniqueId('it')}`) };
}

function user(): SubjectRef {
  return { type: 'user', id: uniqueId('user') };
}

async function membership(organisationId: string, member: SubjectRef): Promise<string> {
  return client.writeRelationships([
    {
      operation: 'touch',
      relationship: {
        resource: { type: 'organization', id: organisationId },
        relation: 'member',
        subject: member,
      },
    },
  ]);
}

describe('SpiceDBClient against the real SpiceDB', () => {
  it('honours a grant with an expiration until it expires', async () => {
    const [resource, consumer] = [item(), user()];
    const expiresAt = new Date(Date.now() + SHORT_LIFETIME_MS);
    const grant: Relationship = { resource, relation: 'api_consumer', subject: consumer, expiresAt };
    const written = await client.writeRelationships([{ operation: 'touch', relationship: grant }]);
    const check = (zedToken: string) =>
      client.checkPermission({
        resource,
        permission: 'api_consumer',
        subject: consumer,
        consistency: { atLeastAsFresh: zedToken },
      });

    expect((await check(written)).allowed).toBe(true);
    const stored = await collect(
      client.readRelationships({ resourceType: 'resource', resourceId: resource.id }),
    );
    expect(stored).toEqual([grant]);

    await sleep(expiresAt.getTime() - Date.now() + 500);
    // Ask at a revision written after the expiry: SpiceDB v1.56 may reuse a check result cached at an
    // older revision (e.g. fully consistent checks with no write since), so the test pins a new one.
    const afterExpiry = await membership(uniqueId('org'), user());
    expect((await check(afterExpiry)).allowed).toBe(false);
    expect(
      await collect(client.readRelationships({ resourceType: 'resource', resourceId: resource.id })),
    ).toEqual([]);
  });

  it('gives a member of an organisation the access type granted to organization#member', async () => {
    const [resource, member, outsider, organisationId] = [item(), user(), user(), uniqueId('org')];
    await client.writeRelationships([
      {
        operation: 'touch',
        relationship: {
          resource,
          relation: 'api_consumer',
          subject: { type: 'organization', id: organisationId, relation: 'member' },
          expiresAt: new Date(Date.now() + 3_600_000),
        },
      },
    ]);
    const written = await membership(organisationId, member);
    const api = (subject: SubjectRef) =>
      client.checkPermission({
        resource,
        permission: 'api_consumer',
        subject,
        consistency: { atLeastAsFresh: written },
      });
    expect(await api(member)).toEqual({ allowed: true, checkedAt: expect.any(String) });
    expect((await api(outsider)).allowed).toBe(false);
    // file is another access type: nobody was granted it.
    const file = await client.checkPermission({
      resource,
      permission: 'file_consumer',
      subject: member,
      consistency: { atLeastAsFresh: written },
    });
    expect(file.allowed).toBe(false);
  });

  it('answers a canonicalised check: group editors are viewers, and the group is scoped by organisation', async () => {
    const itemId = `urn:dx:item:${uniqueId('group-item')}`;
    const [organisationId, otherOrganisationId, groupId] = [uniqueId('org'), uniqueId('org'), 'analysts'];
    const group = { type: 'group', id: groupObjectId(organisationId, groupId) };
    const written = await client.writeRelationships([
      {
        operation: 'touch',
        relationship: {
          resource: { type: 'resource', id: encodeObjectId(itemId) },
          relation: 'editor',
          subject: { ...group, relation: 'member' },
        },
      },
      {
        operation: 'touch',
        relationship: { resource: group, relation: 'member', subject: { type: 'user', id: 'carol' } },
      },
    ]);
    const decide = async (
      subject_type: string,
      subject_id: string,
      organisation_id: string,
      relation: string,
    ) => {
      const { spicedb } = canonicalCheck(registry, {
        subject: { type: subject_type, id: subject_id, organisation_id },
        resource: { type: 'DATABANK', id: itemId },
        relation,
      });
      const result = await client.checkPermission({
        resource: { type: spicedb.resourceType, id: spicedb.resourceId },
        permission: spicedb.permission,
        subject: {
          type: spicedb.subjectType,
          id: spicedb.subjectId,
          ...(spicedb.subjectRelation ? { relation: spicedb.subjectRelation } : {}),
        },
        consistency: { atLeastAsFresh: written },
      });
      return result.allowed;
    };
    expect(await decide('group', groupId, organisationId, 'editor')).toBe(true);
    expect(await decide('group', groupId, organisationId, 'viewer')).toBe(true);
    expect(await decide('user', 'carol', '', 'viewer')).toBe(true);
    expect(await decide('group', groupId, otherOrganisationId, 'viewer')).toBe(false);
    // A group is not a grant subject: the access types take users and organisation members only.
    expect(await decide('group', groupId, organisationId, 'api')).toBe(false);
    expect(await decide('user', 'carol', '', 'owner')).toBe(false);
  });

  it('writes 2,500 relationships in batches and pages through them, each exactly once', async () => {
    const resource = item();
    const subjects = Array.from({ length: 2_500 }, (_, index) => ({ type: 'user', id: `u${index}` }));
    const zedToken = await client.writeRelationshipsInBatches(
      subjects.map((subject) => ({
        operation: 'touch',
        relationship: { resource, relation: 'direct_viewer', subject },
      })),
    );
    expect(zedToken).toEqual(expect.any(String));

    const filter = { resourceType: 'resource', resourceId: resource.id, relation: 'direct_viewer' };
    const pageSizes: number[] = [];
    const seen: string[] = [];
    for await (const page of client.readRelationships(filter, { pageSize: 1_000 })) {
      pageSizes.push(page.relationships.length);
      seen.push(...page.relationships.map((relationship) => relationship.subject.id));
    }
    expect(pageSizes).toEqual([1_000, 1_000, 500]);
    expect(seen).toHaveLength(2_500);
    expect(new Set(seen)).toEqual(new Set(subjects.map((subject) => subject.id)));

    const first = await client.readRelationships(filter, { pageSize: 1_000 }).next();
    const resumed = await collect(
      client.readRelationships(filter, { pageSize: 1_000, cursor: first.value?.cursor }),
    );
    expect(resumed).toHaveLength(1_500);

    const deleted = await client.deleteRelationships(filter);
    expect(deleted.deletedCount).toBe(2_500);
    expect(await collect(client.readRelationships(filter))).toEqual([]);
  });

  it('refuses to send more updates than one call may carry', async () => {
    const resource = item();
    const updates = Array.from({ length: 1_001 }, (_, index) => ({
      operation: 'touch' as const,
      relationship: { resource, relation: 'direct_viewer', subject: { type: 'user', id: `u${index}` } },
    }));
    await expect(client.writeRelationships(updates)).rejects.toThrow(RangeError);
  });

  it('deletes one relationship with a delete update', async () => {
    const [resource, viewer] = [item(), user()];
    const relationship: Relationship = { resource, relation: 'direct_viewer', subject: viewer };
    await client.writeRelationships([{ operation: 'touch', relationship }]);
    const deleted = await client.writeRelationships([{ operation: 'delete', relationship }]);
    const result = await client.checkPermission({
      resource,
      permission: 'viewer',
      subject: viewer,
      consistency: { atLeastAsFresh: deleted },
    });
    expect(result.allowed).toBe(false);
  });

  it('fails closed with SpiceDBUnavailableError when SpiceDB refuses the key', async () => {
    const impostor = new SpiceDBClient({ ...testSpiceDB(), token: 'not-the-key', transport: 'plaintext' });
    try {
      await expect(
        impostor.checkPermission({ resource: item(), permission: 'viewer', subject: user() }),
      ).rejects.toBeInstanceOf(SpiceDBUnavailableError);
    } finally {
      impostor.close();
    }
  });
});

async function collect(pages: AsyncIterable<{ relationships: Relationship[] }>): Promise<Relationship[]> {
  const relationships: Relationship[] = [];
  for await (const page of pages) relationships.push(...page.relationships);
  return relationships;
}
