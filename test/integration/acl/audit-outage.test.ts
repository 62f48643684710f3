import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePostgresBinaries } from '../../../dev/localplane/postgres-binaries.js';
import { startPostgres, type PostgresServer } from '../../../dev/localplane/postgres-server.js';
import { EVENT_BATCH, memberEvent } from '../../support/member-events.js';
import { AclHarness, individual, until, type Caller } from './support/acl-harness.js';
import { AuditDatabase } from './support/audit-records.js';

// PostgreSQL stopped for real (a server of this file's own): every mutating route answers 503 naming
// postgres and changes nothing, reads of grants go on, readiness names postgres; started again, mutations
// are recorded again.

const harness = new AclHarness();
const database = new AuditDatabase(harness);
const orgId = randomUUID();
let stateDir: string;
let postgres: PostgresServer;
let owner: Caller;
let producer: Caller;
let itemId: string;

async function startServer(port?: number): Promise<PostgresServer> {
  return startPostgres({ binaries: await resolvePostgresBinaries(), stateDir, ...(port ? { port } : {}) });
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'audit-outage-'));
  postgres = await startServer();
  harness.audit = { databaseUrl: postgres.url, migrate: true };
  await harness.start('acl-audit-outage');
  owner = await harness.user({ org: orgId });
  producer = await harness.user({ roles: ['platform_event_producer'] });
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
});

afterAll(async () => {
  await harness.stop();
  await postgres.process.stop();
  await rm(stateDir, { recursive: true, force: true });
});

const create = () =>
  harness.request<{ detail: string; results?: { policyId: string }[] }>('POST', '/policy', {
    caller: owner,
    body: { request: [individual(itemId, randomUUID())] },
  });

describe('PostgreSQL stopped', () => {
  it('mutations answer 503 naming postgres and change nothing; reads and readiness go on', async () => {
    const before = await create();
    expect(before.status).toBe(201);
    const policyId = before.body.results?.[0]?.policyId as string;
    const grantsBefore = (await harness.listGrants()).length;
    await postgres.process.stop();

    const refusedCreate = await create();
    expect(refusedCreate.status).toBe(503);
    expect(refusedCreate.body.detail).toContain('postgres');
    const refusedDelete = await harness.request<{ detail: string }>('DELETE', `/policy?id=${policyId}`, {
      caller: owner,
    });
    expect(refusedDelete.status).toBe(503);
    expect(refusedDelete.body.detail).toContain('postgres');
    const key = { organisationId: orgId, userId: randomUUID() };
    const refusedEvents = await harness.request<{ detail: string }>('POST', '/events', {
      caller: producer,
      body: [memberEvent('added', key)],
      headers: { 'content-type': EVENT_BATCH },
    });
    expect(refusedEvents.status).toBe(503);
    expect(refusedEvents.body.detail).toContain('postgres');

    expect((await harness.listGrants()).length, 'no grant created').toBe(grantsBefore);
    expect((await harness.getGrant(await grantName(policyId))).spec.revokedAt, 'not revoked').toBeUndefined();
    expect(await harness.getMembership(key), 'no membership').toBeUndefined();

    const listing = await harness.request<{ results: { policyId: string }[] }>('GET', '/policy/provider', {
      caller: owner,
    });
    expect(listing.status).toBe(200);
    expect(listing.body.results.map((row) => row.policyId)).toContain(policyId);
    const audit = await harness.request<{ detail: string }>('GET', '/audit', { caller: owner });
    expect(audit.status).toBe(503);
    expect(audit.body.detail).toContain('postgres');

    const readiness = await harness.request<{ title: string; results: { name: string; status: string }[] }>(
      'GET',
      '/healthz/ready',
    );
    expect(readiness.status, 'the replica keeps serving reads').toBe(200);
    expect(readiness.body.title).toContain('postgres');
    expect(readiness.body.results).toContainEqual(
      expect.objectContaining({ name: 'postgres', status: 'failed' }),
    );
  });

  it('started again, mutations succeed and are recorded', async () => {
    postgres = await startServer(postgres.port);
    let answer = await create();
    await until(async () => {
      if (answer.status !== 201) answer = await create();
      return answer.status === 201;
    }, 'a create after PostgreSQL is back');
    const policyId = answer.body.results?.[0]?.policyId as string;
    const records = await database.query<{ action: string }>(
      'SELECT action FROM audit.records WHERE target_id = $1',
      [policyId],
    );
    expect(records).toEqual([{ action: 'policy.created' }]);
  });
});

describe('PostgreSQL killed during a stream of creates', () => {
  it('every acknowledged create has its record, and none was acknowledged without one', async () => {
    const acknowledged: string[] = [];
    const refused: number[] = [];
    const creator = async (count: number) => {
      for (let n = 0; n < count; n++) {
        const answer = await create();
        if (answer.status === 201) acknowledged.push(answer.body.results?.[0]?.policyId as string);
        else refused.push(answer.status);
      }
    };
    const stream = Promise.all([creator(15), creator(15), creator(15)]);
    await until(() => acknowledged.length >= 5, 'the first creates acknowledged');
    await postgres.process.kill();
    await stream;
    expect(refused.length, 'creates after the kill were refused').toBeGreaterThan(0);
    expect(new Set(refused)).toEqual(new Set([503]));

    postgres = await startServer(postgres.port);
    let recorded = new Set<string>();
    await until(async () => {
      const rows = await database
        .query<{ target_id: string }>("SELECT target_id FROM audit.records WHERE action = 'policy.created'")
        .catch(() => undefined);
      recorded = new Set(rows?.map((row) => row.target_id));
      return rows !== undefined;
    }, 'PostgreSQL answering again');
    expect(acknowledged.filter((policyId) => !recorded.has(policyId))).toEqual([]);
  });
});

async function grantName(policyId: string): Promise<string> {
  const grant = harness.api.cache.grantByUid(policyId);
  if (!grant?.metadata.name) throw new Error(`policy ${policyId} is not cached`);
  return grant.metadata.name;
}
