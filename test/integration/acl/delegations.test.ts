import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_RESOURCE, agentName, type Agent } from '../../../src/api/v1alpha1/index.js';
import { objectPath } from '../../../src/kube/index.js';
import { AclHarness, inDays, individual, type Caller } from './support/acl-harness.js';

// The delegation routes against the real kube-apiserver: create (201, 400 naming the field, 403 without the
// access to delegate, 409 for another user's agent, race-free ownership), listing, get and revoke of the
// caller's own delegations (403/404 for anyone else's or none).

const harness = new AclHarness();
let provider: Caller;
let owner: Caller;
let itemId: string;

interface Created {
  results: { delegationId: string }[];
}
interface Row {
  delegationId: string;
  agentId: string;
  itemId: string;
  relation: string;
  status: string;
  enforced: boolean;
  expiryAt: string;
  revokedAt?: string;
}
interface Problem {
  type: string;
  detail: string;
}

beforeAll(async () => {
  await harness.start('acl-delegations');
  provider = await harness.user();
  owner = await harness.user();
  const item = await harness.catalogItem({ ownerId: provider.id, organisationId: randomUUID() });
  itemId = item.spec.itemId;
  const granted = await harness.request('POST', '/policy', {
    caller: provider,
    body: { request: [individual(itemId, owner.id)] },
  });
  expect(granted.status).toBe(201);
});

afterAll(() => harness.stop());

const newAgent = () => `urn:dx:agent:${randomUUID()}`;

function delegate(caller: Caller, body: Record<string, unknown>) {
  return harness.request<Created & Problem>('POST', '/delegations', {
    caller,
    body: { itemId, relation: 'querier', expiryTime: inDays(7), ...body },
  });
}

async function agentObject(agentId: string): Promise<Agent> {
  return harness.kube.call<Agent>({
    method: 'GET',
    path: objectPath(AGENT_RESOURCE, { namespace: harness.namespace, name: agentName(agentId) }),
  });
}

describe('POST /delegations', () => {
  it('creates a delegation by the caller and makes the caller the agent’s owner', async () => {
    const agentId = newAgent();
    const created = await delegate(owner, { agentId });
    expect(created.status).toBe(201);
    const [{ delegationId } = { delegationId: '' }] = created.body.results;
    expect(delegationId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await agentObject(agentId)).spec).toEqual({ agentId, ownerId: owner.id });

    const read = await harness.request<{ results: Row[] }>('GET', `/delegations/${delegationId}`, {
      caller: owner,
    });
    expect(read.status).toBe(200);
    expect(read.body.results).toEqual([
      expect.objectContaining({ delegationId, agentId, itemId, relation: 'querier', status: 'ACTIVE' }),
    ]);
    // A second delegation of the owner's own agent is fine.
    expect((await delegate(owner, { agentId, relation: 'viewer' })).status).toBe(201);
  });

  it('answers 409 when another user delegates an agent someone owns', async () => {
    const agentId = newAgent();
    expect((await delegate(owner, { agentId })).status).toBe(201);
    const other = await harness.user();
    const answer = await delegate(other, { agentId, relation: 'viewer' });
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toMatch(/belongs to another user/);
    expect((await agentObject(agentId)).spec.ownerId).toBe(owner.id);
  });

  it('lets exactly one of two users racing for a new agent own it', async () => {
    const agentId = newAgent();
    const [first, second] = [await harness.user(), await harness.user()];
    const answers = await Promise.all(
      [first, second].map((caller) => delegate(caller, { agentId, relation: 'viewer' })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    const winner = answers[0]?.status === 201 ? first : second;
    expect((await agentObject(agentId)).spec.ownerId).toBe(winner.id);
  });

  it('refuses querier to a caller without an active api policy on the item: 403', async () => {
    const stranger = await harness.user();
    const answer = await delegate(stranger, { agentId: newAgent() });
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toMatch(/no active api policy/);
  });

  it('refuses an item the catalog does not hold: 404 naming itemId, and no Agent is claimed', async () => {
    const agentId = newAgent();
    const answer = await delegate(owner, {
      agentId,
      itemId: `urn:dx:item:${randomUUID()}`,
      relation: 'viewer',
    });
    expect(answer.status).toBe(404);
    expect(answer.body.type).toBe('urn:dx:acl:NotFound');
    expect(answer.body.detail).toContain('itemId');
    await expect(agentObject(agentId)).rejects.toThrow();
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown relation', { relation: 'admin' }, 'relation'],
    ['an expiry in the past', { expiryTime: '2020-01-01T00:00:00Z' }, 'expiryTime'],
    ['an expiry without a zone', { expiryTime: '2030-01-01T00:00:00' }, 'expiryTime'],
    ['no agent', { agentId: undefined }, 'agentId'],
    ['an empty item', { itemId: '' }, 'itemId'],
    ['an agent id too long', { agentId: 'a'.repeat(300) }, 'agentId'],
  ])('answers 400 naming the field for %s', async (_, body, field) => {
    const answer = await delegate(owner, { agentId: newAgent(), ...body });
    expect(answer.status).toBe(400);
    expect(answer.body.type).toBe('urn:dx:acl:BadRequest');
    expect(answer.body.detail).toContain(field);
  });
});

describe('the caller’s delegations', () => {
  it('lists only the caller’s, oldest first, a page at a time', async () => {
    const lister = await harness.user();
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      const created = await delegate(lister, { agentId: newAgent(), relation: 'viewer' });
      ids.push(created.body.results[0]?.delegationId ?? '');
    }
    const all = await harness.request<{ results: Row[]; paginationInfo: Record<string, number> }>(
      'GET',
      '/delegations',
      { caller: lister },
    );
    expect(all.status).toBe(200);
    expect(all.body.paginationInfo).toEqual({ offset: 0, limit: 50, totalHits: 3 });
    const ordered = all.body.results.map((row) => row.delegationId);
    expect(new Set(ordered)).toEqual(new Set(ids));
    const page = await harness.request<{ results: Row[] }>('GET', '/delegations?limit=1&offset=1', {
      caller: lister,
    });
    expect(page.body.results.map((row) => row.delegationId)).toEqual([ordered[1]]);
    expect((await harness.request('GET', '/delegations?limit=0', { caller: lister })).status).toBe(400);
  });

  it('revokes softly (204, the record stays DELETED), and again changes nothing', async () => {
    const created = await delegate(owner, { agentId: newAgent() });
    const id = created.body.results[0]?.delegationId ?? '';
    const other = await harness.user();
    expect((await harness.request('DELETE', `/delegations/${id}`, { caller: other })).status).toBe(403);
    expect((await harness.request('GET', `/delegations/${id}`, { caller: other })).status).toBe(403);

    const revoked = await harness.request('DELETE', `/delegations/${id}`, { caller: owner });
    expect(revoked.status).toBe(204);
    const read = await harness.request<{ results: Row[] }>('GET', `/delegations/${id}`, { caller: owner });
    expect(read.body.results[0]).toMatchObject({ status: 'DELETED', revokedAt: expect.any(String) });
    expect((await harness.request('DELETE', `/delegations/${id}`, { caller: owner })).status).toBe(204);
  });

  it('answers 404 for an unknown id and 400 for an id that is not one', async () => {
    expect((await harness.request('GET', `/delegations/${randomUUID()}`, { caller: owner })).status).toBe(
      404,
    );
    expect((await harness.request('DELETE', `/delegations/${randomUUID()}`, { caller: owner })).status).toBe(
      404,
    );
    const malformed = await harness.request<Problem>('GET', '/delegations/not-a-uuid', { caller: owner });
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail).toContain('id');
  });
});

describe('agent ownership', () => {
  const agentPath = (agentId: string) => `/agents/${encodeURIComponent(agentId)}`;
  const statusOf = async (caller: Caller, id: string) =>
    (await harness.request<{ results: Row[] }>('GET', `/delegations/${id}`, { caller })).body.results[0]
      ?.status;

  it('gives a squatted agent back: cos_admin enrols it to its owner and ends the squatter’s delegations', async () => {
    const agentId = newAgent();
    const squatter = await harness.user();
    const squat = await delegate(squatter, { agentId, relation: 'viewer' });
    expect(squat.status).toBe(201);
    expect((await delegate(owner, { agentId })).status).toBe(409);

    const admin = await harness.user({ roles: ['cos_admin'] });
    expect(
      (await harness.request('PUT', agentPath(agentId), { caller: squatter, body: { ownerId: squatter.id } }))
        .status,
    ).toBe(403);
    const enrolled = await harness.request<{ results: unknown[] }>('PUT', agentPath(agentId), {
      caller: admin,
      body: { ownerId: owner.id },
    });
    expect(enrolled.status).toBe(200);
    expect(enrolled.body.results).toEqual([{ agentId, ownerId: owner.id, enrolled: true }]);
    expect((await agentObject(agentId)).spec).toEqual({ agentId, ownerId: owner.id, enrolled: true });
    await expect.poll(() => statusOf(squatter, squat.body.results[0]?.delegationId ?? '')).toBe('DELETED');

    expect((await delegate(owner, { agentId })).status).toBe(201);
    // Enrolled: the squatter cannot take it back, even once the owner's delegations end.
    expect((await delegate(squatter, { agentId, relation: 'viewer' })).status).toBe(409);
  });

  it('releases a claimed agent once its owner has no active delegation of it left', async () => {
    const agentId = newAgent();
    const first = await harness.user();
    const created = await delegate(first, { agentId, relation: 'viewer' });
    expect(created.status).toBe(201);
    const id = created.body.results[0]?.delegationId ?? '';
    expect((await delegate(owner, { agentId })).status).toBe(409);

    expect((await harness.request('DELETE', `/delegations/${id}`, { caller: first })).status).toBe(204);
    expect((await delegate(owner, { agentId })).status).toBe(201);
    expect((await agentObject(agentId)).spec).toEqual({ agentId, ownerId: owner.id });
  });

  it('lets cos_admin delete an agent (204, its delegations revoked), then 404', async () => {
    const agentId = `agent with / and spaces ${randomUUID()}`;
    const created = await delegate(owner, { agentId });
    expect(created.status).toBe(201);
    const admin = await harness.user({ roles: ['cos_admin'] });
    expect((await harness.request('DELETE', agentPath(agentId), { caller: owner })).status).toBe(403);
    expect((await harness.request('DELETE', agentPath(agentId), { caller: admin })).status).toBe(204);
    await expect.poll(() => statusOf(owner, created.body.results[0]?.delegationId ?? '')).toBe('DELETED');
    const again = await harness.request<Problem>('DELETE', agentPath(agentId), { caller: admin });
    expect(again.status).toBe(404);
    expect(again.body.type).toBe('urn:dx:acl:NotFound');
  });

  it('answers 400 naming ownerId for an enrolment to a non-user', async () => {
    const admin = await harness.user({ roles: ['cos_admin'] });
    const answer = await harness.request<Problem>('PUT', agentPath(newAgent()), {
      caller: admin,
      body: { ownerId: 'nobody' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toContain('ownerId');
  });
});
