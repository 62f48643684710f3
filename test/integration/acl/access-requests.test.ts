import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCESS_REQUEST_LABEL,
  ACCESS_REQUEST_RESOURCE,
  type AccessRequest,
} from '../../../src/api/v1alpha1/index.js';
import { collectionPath, objectPath } from '../../../src/kube/index.js';
import { AclHarness, inDays, individual, type Caller } from './support/acl-harness.js';

// The access-request routes against the real kube-apiserver: ask (201, 400 naming the field, 404, 409 for a
// pending request or an effective grant), listings, get (404 for strangers), and every decision: approve
// (through POST /policy's path: the consumer verifies, the grant names the request; a conflict is a 409 that
// creates nothing), reject, withdraw; who may decide (403), If-Match (428, 412) and racing deciders.

const harness = new AclHarness();
const orgId = randomUUID();
let owner: Caller;
let orgAdmin: Caller;
let stranger: Caller;
let itemId: string;

interface Row {
  requestId: string;
  consumerId: string;
  itemId: string;
  status: string;
  decidedBy?: string;
  reason?: string;
  policyIds: string[];
  etag: string;
}
interface Answer {
  results: Row[] & { requestId: string }[];
  paginationInfo: { totalHits: number };
  detail: string;
}

beforeAll(async () => {
  await harness.start('acl-requests');
  owner = await harness.user({ org: orgId });
  orgAdmin = await harness.user({ roles: ['org_admin'], org: orgId });
  stranger = await harness.user({ org: randomUUID() });
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
});

afterAll(() => harness.stop());

function ask(caller: Caller, body: Record<string, unknown> = {}) {
  return harness.request<Answer>('POST', '/access-requests', {
    caller,
    body: { itemId, itemType: 'DATABANK', access: [{ accessType: 'api' }], expiryTime: inDays(30), ...body },
  });
}

/** A pending request by a new consumer: its id and the ETag of the answer. */
async function pending(consumer?: Caller) {
  const caller = consumer ?? (await harness.user());
  const asked = await ask(caller, { purpose: 'quarterly report' });
  expect(asked.status).toBe(201);
  return {
    consumer: caller,
    id: asked.body.results[0]?.requestId ?? '',
    etag: asked.headers.get('etag') ?? '',
  };
}

function read(caller: Caller, id: string) {
  return harness.request<Answer>('GET', `/access-requests/${id}`, { caller });
}

function decide(caller: Caller, id: string, body: Record<string, unknown>, etag?: string) {
  return harness.request<Answer>('PATCH', `/access-requests/${id}`, {
    caller,
    body,
    headers: etag === undefined ? {} : { 'if-match': etag },
  });
}

async function stored(id: string): Promise<AccessRequest> {
  const list = await harness.kube.call<{ items: AccessRequest[] }>({
    method: 'GET',
    path: collectionPath(ACCESS_REQUEST_RESOURCE, harness.namespace),
  });
  const found = list.items.find((request) => request.metadata.uid === id);
  if (!found) throw new Error(`no AccessRequest ${id}`);
  return found;
}

async function grantsOfRequest(id: string) {
  return (await harness.listGrants()).filter((grant) => grant.metadata.labels?.[ACCESS_REQUEST_LABEL] === id);
}

function verify(consumer: Caller) {
  return harness.request('POST', '/verify', {
    caller: consumer,
    body: { user: { id: consumer.id }, item: { itemId } },
  });
}

describe('POST /access-requests', () => {
  it('creates a PENDING request of the caller, stored with its state and answered with its ETag', async () => {
    const { consumer, id, etag } = await pending();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const object = await stored(id);
    expect(object.spec).toMatchObject({ consumerId: consumer.id, itemId, purpose: 'quarterly report' });
    expect(object.status?.state).toBe('PENDING');
    expect(etag).toBe(`"${object.metadata.resourceVersion}"`);
    const got = await read(consumer, id);
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe(etag);
    expect(got.body.results[0]).toMatchObject({
      requestId: id,
      consumerId: consumer.id,
      status: 'PENDING',
      etag,
    });
  });

  it('400 naming the field', async () => {
    const consumer = await harness.user();
    const cases: [Record<string, unknown>, string][] = [
      [{ expiryTime: '2020-01-01T00:00:00Z' }, 'expiryTime'],
      [{ access: [{ accessType: 'api' }, { accessType: 'api' }] }, 'access'],
      [{ itemType: 'MODEL' }, 'itemType'],
      [{ access: [{ accessType: 'stream' }] }, 'access[0].accessType'],
    ];
    for (const [body, field] of cases) {
      const answer = await ask(consumer, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.detail).toContain(field);
    }
  });

  it('404 for an item no CatalogItem has', async () => {
    const answer = await ask(await harness.user(), { itemId: `urn:dx:item:${randomUUID()}` });
    expect(answer.status).toBe(404);
  });

  it('409 when the caller already has a pending request for an access type asked', async () => {
    const { consumer } = await pending();
    const again = await ask(consumer, { access: [{ accessType: 'file' }, { accessType: 'api' }] });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain('already pending');
    expect((await ask(consumer, { access: [{ accessType: 'file' }] })).status).toBe(201);
  });

  it('409 when an effective grant already gives the caller an access type asked', async () => {
    const consumer = await harness.user();
    const granted = await harness.request('POST', '/policy', {
      caller: owner,
      body: { request: [individual(itemId, consumer.id, ['sub'])] },
    });
    expect(granted.status).toBe(201);
    const answer = await ask(consumer, { access: [{ accessType: 'sub' }] });
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toContain('active policy');
  });
});

describe('listings and reads', () => {
  it('the consumer lists their own, the owner and the org_admin the item’s, a stranger none; status filters', async () => {
    const { consumer, id } = await pending();
    const idsOf = async (caller: Caller, path: string) =>
      (await harness.request<Answer>('GET', path, { caller })).body.results.map((row) => row.requestId);
    expect(await idsOf(consumer, '/access-requests/consumer')).toEqual([id]);
    expect(await idsOf(consumer, '/access-requests/consumer?status=APPROVED')).toEqual([]);
    expect(await idsOf(owner, '/access-requests/provider?limit=1000')).toContain(id);
    expect(await idsOf(orgAdmin, '/access-requests/provider?status=PENDING&limit=1000')).toContain(id);
    expect(await idsOf(stranger, '/access-requests/provider')).toEqual([]);
  });

  it('lists in a deterministic order, oldest first, with limit and offset', async () => {
    const consumer = await harness.user();
    await pending(consumer);
    expect((await ask(consumer, { access: [{ accessType: 'file' }] })).status).toBe(201);
    const all = await harness.request<Answer>('GET', '/access-requests/consumer', { caller: consumer });
    const second = await harness.request<Answer>('GET', '/access-requests/consumer?limit=1&offset=1', {
      caller: consumer,
    });
    expect(all.body.paginationInfo.totalHits).toBe(2);
    expect(second.body.results.map((row) => row.requestId)).toEqual([all.body.results[1]?.requestId]);
  });

  it('404 for a caller who is neither the consumer nor a decider', async () => {
    const { id } = await pending();
    expect((await read(stranger, id)).status).toBe(404);
    expect((await read(orgAdmin, id)).status).toBe(200);
  });
});

describe('PATCH /access-requests/{id}', () => {
  it('approval by the owner creates the grant through the create path: the consumer verifies, both are linked', async () => {
    const { consumer, id, etag } = await pending();
    expect((await verify(consumer)).status).toBe(403);
    const approved = await decide(owner, id, { status: 'APPROVED', reason: 'fine' }, etag);
    expect(approved.status).toBe(200);
    const [row] = approved.body.results;
    expect(row).toMatchObject({ requestId: id, status: 'APPROVED', decidedBy: owner.id, reason: 'fine' });
    expect(row?.policyIds).toHaveLength(1);
    expect(approved.headers.get('etag')).not.toBe(etag);
    const [grant] = await grantsOfRequest(id);
    expect(grant?.metadata.uid).toBe(row?.policyIds[0]);
    expect(grant?.spec).toMatchObject({ userId: consumer.id, itemId, issuerId: owner.id });
    expect((await verify(consumer)).status).toBe(200);
    expect((await stored(id)).status).toMatchObject({ state: 'APPROVED', policyIds: row?.policyIds });
  });

  it('approval may set another expiryTime for the grant', async () => {
    const { id, etag } = await pending();
    const expiryTime = inDays(3);
    expect((await decide(orgAdmin, id, { status: 'APPROVED', expiryTime }, etag)).status).toBe(200);
    expect((await grantsOfRequest(id))[0]?.spec.expiryTime).toBe(expiryTime);
  });

  it('rejection by an org_admin creates nothing; the request is final afterwards (409)', async () => {
    const { consumer, id, etag } = await pending();
    const rejected = await decide(orgAdmin, id, { status: 'REJECTED', reason: 'no' }, etag);
    expect(rejected.status).toBe(200);
    expect(rejected.body.results[0]).toMatchObject({
      status: 'REJECTED',
      decidedBy: orgAdmin.id,
      policyIds: [],
    });
    expect(await grantsOfRequest(id)).toEqual([]);
    const again = await decide(owner, id, { status: 'APPROVED' }, rejected.headers.get('etag') ?? '');
    expect(again.status).toBe(409);
    expect((await verify(consumer)).status).toBe(403);
  });

  it('the consumer withdraws; only the consumer may withdraw and only deciders approve or reject (403)', async () => {
    const { consumer, id, etag } = await pending();
    expect((await decide(consumer, id, { status: 'APPROVED' }, etag)).status).toBe(403);
    expect((await decide(stranger, id, { status: 'REJECTED' }, etag)).status).toBe(403);
    expect((await decide(owner, id, { status: 'WITHDRAWN' }, etag)).status).toBe(403);
    const withdrawn = await decide(consumer, id, { status: 'WITHDRAWN' }, etag);
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body.results[0]).toMatchObject({ status: 'WITHDRAWN', decidedBy: consumer.id });
  });

  it('428 without If-Match, 412 with a stale one; the request stays PENDING', async () => {
    const { id, etag } = await pending();
    const missing = await decide(owner, id, { status: 'APPROVED' });
    expect(missing.status).toBe(428);
    expect(missing.body.detail).toContain('If-Match');
    await harness.kube.call({
      method: 'PATCH',
      path: objectPath(ACCESS_REQUEST_RESOURCE, {
        namespace: harness.namespace,
        name: (await stored(id)).metadata.name ?? '',
      }),
      contentType: 'application/json-patch+json',
      body: [{ op: 'add', path: '/metadata/labels', value: { touched: 'yes' } }],
    });
    const stale = await decide(owner, id, { status: 'APPROVED' }, etag);
    expect(stale.status).toBe(412);
    expect(await grantsOfRequest(id)).toEqual([]);
    expect((await stored(id)).status?.state).toBe('PENDING');
  });

  it('of two deciders racing on one ETag exactly one wins, and a lost approval leaves no grant', async () => {
    const { consumer, id, etag } = await pending();
    const answers = await Promise.all([
      decide(owner, id, { status: 'APPROVED' }, etag),
      decide(orgAdmin, id, { status: 'REJECTED' }, etag),
    ]);
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    const final = (await stored(id)).status?.state;
    expect(final === 'APPROVED' ? statuses[0] : statuses[1]).toBe(200);
    expect((await grantsOfRequest(id)).length).toBe(final === 'APPROVED' ? 1 : 0);
    expect((await verify(consumer)).status).toBe(final === 'APPROVED' ? 200 : 403);
  });

  it('an approval that would conflict answers 409, creates nothing and leaves the request PENDING', async () => {
    const { consumer, id, etag } = await pending();
    const direct = await harness.request('POST', '/policy', {
      caller: owner,
      body: { request: [individual(itemId, consumer.id, ['api'])] },
    });
    expect(direct.status).toBe(201);
    const grantsBefore = (await harness.listGrants()).length;
    const approved = await decide(owner, id, { status: 'APPROVED' }, etag);
    expect(approved.status).toBe(409);
    expect(approved.body.detail).toContain('active policy');
    expect((await harness.listGrants()).length).toBe(grantsBefore);
    expect((await stored(id)).status?.state).toBe('PENDING');
  });

  it('400 naming the field of a bad decision; 404 for an unknown id', async () => {
    const { id, etag } = await pending();
    const bad = await decide(owner, id, { status: 'REJECTED', expiryTime: inDays(3) }, etag);
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('expiryTime');
    expect((await decide(owner, randomUUID(), { status: 'REJECTED' }, etag)).status).toBe(404);
  });
});
