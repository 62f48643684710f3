import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aclRouteClass } from '../../../src/acl/acl-route-classes.js';
import { REPLAY_DETAIL } from '../../../src/acl/audit/replayed-results.js';
import { AuditStore } from '../../../src/audit/audit-store.js';
import { ACL_API_FIELD_MANAGER } from '../../../src/audit/field-managers.js';
import type { HttpMethod } from '../../../src/http/openapi/route-definition.js';
import { WRITER_ROLE } from '../../../src/audit/migrations.js';
import { recordHash, type AuditRecord } from '../../../src/audit/audit-record.js';
import { RECORD_COLUMNS, recordFromRow, type RecordRow } from '../../../src/audit/record-rows.js';
import { uniqueId } from '../support/cluster.js';
import { TEST_CHAIN_KEY, withDatabase } from '../support/database.js';
import { memberEvent, EVENT_BATCH } from '../../support/member-events.js';
import { AclHarness, individual, type Caller } from './support/acl-harness.js';
import { AuditDatabase } from './support/audit-records.js';

// The audit trail of the ACL API against real PostgreSQL and kube-apiserver: one record per action for every
// mutating route (and every refusal), the hash chain found broken after edits in PostgreSQL, the writer
// role's limits, and GET /audit, /audit/export and /audit/verify.

const harness = new AclHarness();
const database = new AuditDatabase(harness);
const orgId = randomUUID();
let owner: Caller;
let orgAdmin: Caller;
let cosAdmin: Caller;
let producer: Caller;
let stranger: Caller;
let itemId: string;

beforeAll(async () => {
  await harness.start('acl-audit');
  owner = await harness.user({ org: orgId });
  orgAdmin = await harness.user({ roles: ['org_admin'], org: orgId });
  cosAdmin = await harness.user({ roles: ['cos_admin'] });
  producer = await harness.user({ roles: ['event_producer'], org: orgId });
  stranger = await harness.user({ org: randomUUID() });
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
});

afterAll(() => harness.stop());

/** A request with a request id of its own, so that its records can be found. */
async function sent(
  method: string,
  path: string,
  caller: Caller,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const requestId = uniqueId('req');
  const answer = await harness.request<Record<string, unknown>>(method, path, {
    caller,
    ...(body === undefined ? {} : { body }),
    headers: { 'x-request-id': requestId, ...headers },
  });
  return { ...answer, requestId, records: await database.ofRequest(requestId) };
}

function delegationBody() {
  const expiryTime = new Date(Date.now() + 86_400_000).toISOString();
  return { agentId: `agent-${randomUUID()}`, itemId, relation: 'viewer', expiryTime };
}

async function createdDelegation(): Promise<string> {
  const created = await harness.request<{ results: { delegationId: string }[] }>('POST', '/delegations', {
    caller: owner,
    body: delegationBody(),
  });
  expect(created.status).toBe(201);
  return created.body.results[0]?.delegationId ?? '';
}

function accessRequestBody() {
  const expiryTime = new Date(Date.now() + 86_400_000).toISOString();
  return { itemId, itemType: 'DATABANK', access: [{ accessType: 'api' }], expiryTime };
}

/** A pending access request of a new consumer: its id and ETag. */
async function askedAccess(): Promise<{ id: string; etag: string }> {
  const consumer = await harness.user();
  const asked = await harness.request<{ results: { requestId: string }[] }>('POST', '/access-requests', {
    caller: consumer,
    body: accessRequestBody(),
  });
  expect(asked.status).toBe(201);
  return { id: asked.body.results[0]?.requestId ?? '', etag: asked.headers.get('etag') ?? '' };
}

function createBody(userId = randomUUID()) {
  return { request: [individual(itemId, userId, ['api'])] };
}

async function createdPolicy(caller = owner): Promise<string> {
  const answer = await sent('POST', '/policy', caller, createBody());
  expect(answer.status).toBe(201);
  return (answer.body.results as { policyId: string }[])[0]?.policyId as string;
}

describe('one record per action', () => {
  it('POST /policy: one policy.created per grant, with actor, target and outcome', async () => {
    const body = { request: [individual(itemId, randomUUID()), individual(itemId, randomUUID())] };
    const answer = await sent('POST', '/policy', orgAdmin, body);
    expect(answer.status).toBe(201);
    const policyIds = (answer.body.results as { policyId: string }[]).map((result) => result.policyId);
    expect(
      answer.records.map((record) => [record.action, record.target, record.actor, record.outcome]),
    ).toEqual(
      policyIds.map((policyId) => [
        'policy.created',
        { kind: 'policy', id: policyId, itemId, organisationId: orgId },
        { type: 'user', id: orgAdmin.id },
        { status: 201, detail: '2 policies created' },
      ]),
    );
  });

  it('POST /policy answered again from its Idempotency-Key: recorded as a replay, written as the API', async () => {
    const body = createBody();
    const headers = { 'idempotency-key': uniqueId('idem') };
    const first = await sent('POST', '/policy', owner, body, headers);
    const again = await sent('POST', '/policy', owner, body, headers);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body.results).toEqual(first.body.results);
    const policyId = (first.body.results as { policyId: string }[])[0]?.policyId;
    expect(first.records).toMatchObject([
      { target: { id: policyId }, outcome: { detail: '1 policy created' } },
    ]);
    expect(again.records).toMatchObject([
      { action: 'policy.created', target: { id: policyId }, outcome: { status: 201, detail: REPLAY_DETAIL } },
    ]);
    // The controller tells the API's changes (recorded here) from kubectl's by this field manager.
    const grant = (await harness.listGrants()).find((candidate) => candidate.metadata.uid === policyId);
    expect(grant?.metadata.managedFields?.map((entry) => entry.manager)).toContain(ACL_API_FIELD_MANAGER);
  });

  it('POST /policy refused (403): one record per requested item, naming only what the request did', async () => {
    const answer = await sent('POST', '/policy', stranger, createBody());
    expect(answer.status).toBe(403);
    // toMatchObject on an array also checks its length: exactly one record.
    expect(answer.records).toMatchObject([
      { action: 'policy.created', actor: { type: 'user', id: stranger.id }, outcome: { status: 403 } },
    ]);
    // Not the item's organisation: the stranger reads this record, which must not tell that the item exists.
    expect(answer.records[0]?.target).toEqual({ kind: 'item', id: itemId, itemId });
  });

  it('DELETE /policy: policy.revoked, and its refusal', async () => {
    const policyId = await createdPolicy();
    const refused = await sent('DELETE', `/policy?id=${policyId}`, stranger);
    expect(refused.status).toBe(403);
    expect(refused.records).toMatchObject([{ action: 'policy.revoked', outcome: { status: 403 } }]);
    // Not the policy's item: a stranger would learn it from a policy id alone.
    expect(refused.records[0]?.target).toEqual({ kind: 'policy', id: policyId });
    const revoked = await sent('DELETE', `/policy?id=${policyId}`, owner);
    expect(revoked.status).toBe(200);
    expect(
      revoked.records.map(({ action, actor, target, outcome }) => ({ action, actor, target, outcome })),
    ).toEqual([
      {
        action: 'policy.revoked',
        actor: { type: 'user', id: owner.id },
        target: { kind: 'policy', id: policyId, itemId, organisationId: orgId },
        outcome: { status: 200, detail: '1 policy deleted' },
      },
    ]);
  });

  it('POST /events: one record per event with its outcome; a caller without the role is recorded refused', async () => {
    const key = { organisationId: orgId, userId: randomUUID() };
    const events = [memberEvent('added', key), memberEvent('added', { ...key, groupId: 'g1' })];
    const answer = await sent('POST', '/events', producer, events, { 'content-type': EVENT_BATCH });
    expect(answer.status).toBe(200);
    expect(answer.records.map((record) => [record.action, record.target.id, record.outcome.detail])).toEqual([
      ['membership.added', `${orgId}/members/${key.userId}`, 'applied'],
      ['membership.added', `${orgId}/groups/g1/members/${key.userId}`, 'applied'],
    ]);
    const refused = await sent('POST', '/events', stranger, events, { 'content-type': EVENT_BATCH });
    expect(refused.status).toBe(403);
    expect(refused.records).toMatchObject([
      { action: 'membership.events', actor: { id: stranger.id }, outcome: { status: 403 } },
    ]);
  });

  it('PUT .../members: membership.replaced on the organisation or the group', async () => {
    const userIds = [randomUUID()];
    const organisation = await sent('PUT', `/organisations/${orgId}/members`, producer, { userIds });
    const groupAnswer = await sent('PUT', `/organisations/${orgId}/groups/g2/members`, producer, { userIds });
    expect([organisation.status, groupAnswer.status]).toEqual([200, 200]);
    expect(organisation.records).toMatchObject([
      {
        action: 'membership.replaced',
        target: { kind: 'organisation', id: orgId },
        outcome: { status: 200 },
      },
    ]);
    expect(groupAnswer.records).toMatchObject([
      { action: 'membership.replaced', target: { kind: 'group', id: `${orgId}/g2`, organisationId: orgId } },
    ]);
  });

  it('access requests: accessrequest.created; an approval is accessrequest.approved and policy.created; a refusal too', async () => {
    const consumer = await harness.user();
    const asked = await sent('POST', '/access-requests', consumer, accessRequestBody());
    expect(asked.status).toBe(201);
    const requestId = (asked.body.results as { requestId: string }[])[0]?.requestId ?? '';
    const requestTarget = { kind: 'accessrequest', id: requestId, itemId, organisationId: orgId };
    expect(asked.records).toMatchObject([
      { action: 'accessrequest.created', actor: { id: consumer.id }, target: requestTarget },
    ]);
    const etag = asked.headers.get('etag') ?? '';
    const refused = await sent(
      'PATCH',
      `/access-requests/${requestId}`,
      stranger,
      { status: 'APPROVED' },
      {
        'if-match': etag,
      },
    );
    expect(refused.status).toBe(403);
    expect(refused.records).toMatchObject([{ action: 'accessrequest.approved', outcome: { status: 403 } }]);
    const approved = await sent(
      'PATCH',
      `/access-requests/${requestId}`,
      owner,
      { status: 'APPROVED' },
      {
        'if-match': etag,
      },
    );
    expect(approved.status).toBe(200);
    const [policyId] = (approved.body.results as { policyIds: string[] }[])[0]?.policyIds ?? [];
    expect(approved.records.map(({ action, target, outcome }) => ({ action, target, outcome }))).toEqual([
      { action: 'accessrequest.approved', target: requestTarget, outcome: { status: 200 } },
      {
        action: 'policy.created',
        target: { kind: 'policy', id: policyId, itemId, organisationId: orgId },
        outcome: { status: 200 },
      },
    ]);
  });

  it('an application is recorded by its client id', async () => {
    const answer = await sent('PUT', `/organisations/${orgId}/members`, harness.basicCaller(), {
      userIds: [],
    });
    expect(answer.status).toBe(403);
    expect(answer.records[0]?.actor).toEqual({ type: 'application', id: 'gateway-app' });
  });
});

describe('every mutating route of the OpenAPI document is audited', () => {
  it('walks the document: each mutating operation leaves a record of its request', async () => {
    const examples: Record<
      string,
      () => Promise<{ path: string; caller: Caller; body?: unknown; headers?: Record<string, string> }>
    > = {
      createPolicy: async () => ({ path: '/policy', caller: owner, body: createBody() }),
      deletePolicy: async () => ({ path: `/policy?id=${await createdPolicy()}`, caller: owner }),
      postMemberEvents: async () => ({
        path: '/events',
        caller: producer,
        body: [memberEvent('added', { organisationId: orgId, userId: randomUUID() })],
        headers: { 'content-type': EVENT_BATCH },
      }),
      replaceOrganisationMembers: async () => ({
        path: `/organisations/${orgId}/members`,
        caller: producer,
        body: { userIds: [] },
      }),
      createDelegation: async () => ({ path: '/delegations', caller: owner, body: delegationBody() }),
      deleteDelegation: async () => ({ path: `/delegations/${await createdDelegation()}`, caller: owner }),
      createAccessRequest: async () => ({
        path: '/access-requests',
        caller: await harness.user(),
        body: accessRequestBody(),
      }),
      decideAccessRequest: async () => {
        const { id, etag } = await askedAccess();
        return {
          path: `/access-requests/${id}`,
          caller: owner,
          body: { status: 'APPROVED' },
          headers: { 'if-match': etag },
        };
      },
      replaceGroupMembers: async () => ({
        path: `/organisations/${orgId}/groups/g3/members`,
        caller: producer,
        body: { userIds: [] },
      }),
      enrolAgent: async () => ({
        path: `/agents/${encodeURIComponent(`agent-${randomUUID()}`)}`,
        caller: cosAdmin,
        body: { ownerId: owner.id },
      }),
      deleteAgent: async () => {
        const agentId = `agent-${randomUUID()}`;
        const enrolled = await sent('PUT', `/agents/${agentId}`, cosAdmin, { ownerId: owner.id });
        expect(enrolled.status).toBe(200);
        return { path: `/agents/${agentId}`, caller: cosAdmin };
      },
    };
    const document = (
      await harness.request<{ paths: Record<string, Record<string, { operationId: string }>> }>(
        'GET',
        '/docs',
      )
    ).body;
    // Mutating: the rate limiter's write class (every method but GET, less POST /verify, which reads).
    const mutating = Object.values(document.paths)
      .flatMap((operations) =>
        Object.entries(operations).map(([method, operation]) => ({
          method,
          operationId: operation.operationId,
        })),
      )
      .filter((operation): operation is { method: HttpMethod; operationId: string } =>
        ['get', 'post', 'put', 'patch', 'delete'].includes(operation.method),
      )
      .filter((operation) => aclRouteClass(operation) === 'write');
    expect(mutating.length).toBeGreaterThanOrEqual(5);
    for (const { method, operationId } of mutating) {
      const example = examples[operationId];
      expect(
        example,
        `${operationId}: add an example request here; it must leave an audit record`,
      ).toBeDefined();
      const { path, caller, body, headers } = await (example as NonNullable<typeof example>)();
      const answer = await sent(method.toUpperCase(), path, caller, body, headers);
      expect(answer.status, `${operationId} answered ${JSON.stringify(answer.body)}`).toBeLessThan(300);
      expect(answer.records.length, `${operationId} left no audit record`).toBeGreaterThan(0);
    }
  });
});

describe('GET /audit/verify', () => {
  it('finds a record edited and a record deleted directly in PostgreSQL, and where', async () => {
    for (let i = 0; i < 4; i++) await createdPolicy();
    const intact = await sent('GET', '/audit/verify', cosAdmin);
    expect(intact.status).toBe(200);
    expect(intact.body.results).toMatchObject([{ valid: true, breaks: [] }]);

    const [edited, , deleted] = await database.query<{ id: string }>(
      "SELECT id FROM audit.records WHERE action = 'policy.created' ORDER BY id DESC LIMIT 3",
    );
    await database.query("UPDATE audit.records SET outcome_detail = 'nothing happened' WHERE id = $1", [
      edited?.id,
    ]);
    await database.query('DELETE FROM audit.records WHERE id = $1', [deleted?.id]);
    const broken = await sent('GET', '/audit/verify', cosAdmin);
    const report = (broken.body.results as { valid: boolean; breaks: { id: string; reason: string }[] }[])[0];
    expect(report?.valid).toBe(false);
    expect(report?.breaks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: edited?.id, reason: 'altered' }),
        expect.objectContaining({ id: String(BigInt(deleted?.id ?? 0) + 1n), reason: 'missing' }),
      ]),
    );
    expect((await sent('GET', '/audit/verify', owner)).status).toBe(403);
  });

  it("finds a record the database's owner rewrote with a recomputed SHA-256 hash: it lacks the chain key", async () => {
    await createdPolicy();
    const [row] = await database.query<RecordRow>(
      `SELECT ${RECORD_COLUMNS} FROM audit.records ORDER BY id DESC LIMIT 1`,
    );
    const { hash: _old, ...content } = recordFromRow(row as RecordRow);
    const rewritten = { ...content, outcome: { status: 201, detail: 'rewritten by the owner' } };
    await database.query('UPDATE audit.records SET outcome_detail = $2, hash = $3 WHERE id = $1', [
      rewritten.id,
      rewritten.outcome.detail,
      recordHash(rewritten),
    ]);
    const answer = await sent('GET', '/audit/verify', cosAdmin);
    const [report] = answer.body.results as { valid: boolean; keyed: boolean; breaks: unknown[] }[];
    expect(report).toMatchObject({ valid: false, keyed: true });
    expect(report?.breaks).toContainEqual(expect.objectContaining({ id: rewritten.id, reason: 'forged' }));
  });
});

describe('the writer role', () => {
  it('appends and reads records as the services do, and may never UPDATE or DELETE them', async () => {
    const login = uniqueId('writer').replace(/-/g, '_');
    await database.query(`CREATE ROLE ${login} LOGIN PASSWORD 'writer-password' IN ROLE ${WRITER_ROLE}`);
    const url = withDatabase(harness.audit?.databaseUrl as string, {
      user: login,
      password: 'writer-password',
    });
    const store = new AuditStore({ connectionString: url, chainKey: TEST_CHAIN_KEY });
    const [appended] = await store
      .append([
        {
          actor: { type: 'user', id: owner.id },
          action: 'test.appended',
          target: { kind: 'test', id: 'writer' },
          outcome: { status: 200 },
          requestId: uniqueId('req'),
        },
      ])
      .finally(() => store.close());
    expect(appended?.action).toBe('test.appended');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ count: string }>('SELECT count(*) FROM audit.records');
      expect(Number(rows[0]?.count)).toBeGreaterThan(0);
      for (const statement of [
        "UPDATE audit.records SET outcome_detail = 'x'",
        'DELETE FROM audit.records',
        'TRUNCATE audit.records',
        'UPDATE audit.chain_anchor SET last_pruned_id = 0',
        'UPDATE audit.settings SET retention_days = 1',
      ]) {
        await expect(client.query(statement), statement).rejects.toMatchObject({ code: '42501' });
      }
    } finally {
      await client.end();
    }
  });
});

describe('GET /audit', () => {
  it('filters by actor, action, itemId, policyId and time, newest first', async () => {
    const policyId = await createdPolicy(orgAdmin);
    await sent('DELETE', `/policy?id=${policyId}`, orgAdmin);
    const listed = async (query: string) =>
      ((await sent('GET', `/audit?${query}`, cosAdmin)).body.results as AuditRecord[]) ?? [];
    const ofPolicy = await listed(`policyId=${policyId}`);
    expect(ofPolicy.map((record) => record.action)).toEqual(['policy.revoked', 'policy.created']);
    expect(Number(ofPolicy[0]?.id)).toBeGreaterThan(Number(ofPolicy[1]?.id));
    const revocations = await listed(`actor=${orgAdmin.id}&action=policy.revoked`);
    expect(revocations.map((record) => record.target.id)).toContain(policyId);
    expect(revocations.every((record) => record.actor.id === orgAdmin.id)).toBe(true);
    expect(
      (await listed(`itemId=${encodeURIComponent(itemId)}`)).every((r) => r.target.itemId === itemId),
    ).toBe(true);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await listed(`from=${future}`)).toEqual([]);
    expect((await listed(`to=${future}&policyId=${policyId}`)).length).toBe(2);
  });

  it('pages with a keyset cursor, without repeats or gaps', async () => {
    const caller = await harness.user({ org: orgId, id: owner.id });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await sent('GET', `/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`, caller);
      expect(page.status).toBe(200);
      seen.push(...(page.body.results as AuditRecord[]).map((record) => record.id));
      cursor = page.body.nextCursor as string | undefined;
    } while (cursor);
    const all = (await sent('GET', '/audit?limit=1000', caller)).body.results as AuditRecord[];
    expect(seen).toEqual(all.map((record) => record.id));
    expect(seen.length).toBeGreaterThan(2);
  });

  it('shows cos_admin everything, an org_admin their organisation, a user their own actions', async () => {
    const ids = async (caller: Caller) =>
      ((await sent('GET', '/audit?limit=1000', caller)).body.results as AuditRecord[]).map((r) => r);
    const mine = await ids(stranger);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((record) => record.actor.id === stranger.id)).toBe(true);
    const organisation = await ids(orgAdmin);
    expect(organisation.every((r) => r.target.organisationId === orgId || r.actor.id === orgAdmin.id)).toBe(
      true,
    );
    // The stranger was only ever refused, and a refusal names no item's organisation.
    expect(organisation.filter((r) => r.actor.id === stranger.id)).toEqual([]);
    const everything = await ids(cosAdmin);
    expect(everything.length).toBeGreaterThan(organisation.length);
    expect(everything.filter((r) => r.actor.id === stranger.id)).toEqual(mine);
  });

  it('400 naming the field for a bad cursor, time or limit', async () => {
    for (const [query, field] of [
      ['cursor=not-ours', 'cursor'],
      ['from=yesterday', 'from'],
      ['limit=0', 'limit'],
      [`from=${new Date().toISOString()}&to=2000-01-01T00:00:00Z`, 'to'],
    ]) {
      const answer = await sent('GET', `/audit?${query}`, cosAdmin);
      expect(answer.status, query).toBe(400);
      expect(answer.body.detail, query).toContain(field);
    }
  });
});

describe('GET /audit/export', () => {
  it('streams NDJSON oldest first to cos_admin, and refuses anyone else', async () => {
    const policyId = await createdPolicy();
    const response = await fetch(`${harness.api.url}/audit/export`, {
      headers: { authorization: cosAdmin.authorization },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/x-ndjson');
    const records = (await response.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditRecord);
    const ids = records.map((record) => Number(record.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(records.some((record) => record.target.id === policyId)).toBe(true);
    expect((await sent('GET', '/audit/export', orgAdmin)).status).toBe(403);
  });
});
