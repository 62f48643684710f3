import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AclHarness, inDays, type Caller } from './support/acl-harness.js';

// Per-user quotas against the real kube-apiserver: the delegations, agents and access requests a user holds
// are bounded (409 in the envelope naming the quota's variable), finished objects count until garbage
// collection removes them, and one user's quota is not another's.

const harness = new AclHarness();
let itemId: string;

interface Answer {
  type: string;
  detail: string;
  results: { delegationId?: string; requestId?: string }[];
}

beforeAll(async () => {
  await harness.start('acl-quotas', { quotas: { delegations: 3, agents: 2, accessRequests: 2 } });
  const owner = await harness.user();
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: randomUUID() })).spec.itemId;
});

afterAll(() => harness.stop());

function delegate(caller: Caller, agentId: string) {
  return harness.request<Answer>('POST', '/delegations', {
    caller,
    body: { agentId, itemId, relation: 'viewer', expiryTime: inDays(7) },
  });
}

function ask(caller: Caller) {
  return harness.request<Answer>('POST', '/access-requests', {
    caller,
    body: { itemId, itemType: 'DATABANK', access: [{ accessType: 'api' }], expiryTime: inDays(30) },
  });
}

function expectQuota(answer: { status: number; body: Answer }, variable: string): void {
  expect(answer.status).toBe(409);
  expect(answer.body.type).toBe('urn:dx:acl:Conflict');
  expect(answer.body.detail).toContain(variable);
}

describe('per-user quotas', () => {
  it('bounds the agents and the delegations a user holds, revoked ones included', async () => {
    const user = await harness.user();
    const [first, second] = [`agent-${randomUUID()}`, `agent-${randomUUID()}`];
    expect((await delegate(user, first)).status).toBe(201);
    const revocable = await delegate(user, second);
    expect(revocable.status).toBe(201);
    expectQuota(await delegate(user, `agent-${randomUUID()}`), 'ACL_MAX_AGENTS_PER_USER=2');
    expect((await delegate(user, first)).status).toBe(201);

    const id = revocable.body.results[0]?.delegationId ?? '';
    expect((await harness.request('DELETE', `/delegations/${id}`, { caller: user })).status).toBe(204);
    expectQuota(await delegate(user, first), 'ACL_MAX_DELEGATIONS_PER_USER=3');

    expect((await delegate(await harness.user(), `agent-${randomUUID()}`)).status).toBe(201);
  });

  it('bounds the access requests a user holds: asking and withdrawing does not grow without bound', async () => {
    const user = await harness.user();
    for (let round = 0; round < 2; round++) {
      const asked = await ask(user);
      expect(asked.status).toBe(201);
      const withdrawn = await harness.request(
        'PATCH',
        `/access-requests/${asked.body.results[0]?.requestId}`,
        {
          caller: user,
          body: { status: 'WITHDRAWN' },
          headers: { 'if-match': asked.headers.get('etag') ?? '' },
        },
      );
      expect(withdrawn.status).toBe(200);
    }
    expectQuota(await ask(user), 'ACL_MAX_ACCESS_REQUESTS_PER_USER=2');
    expect((await ask(await harness.user())).status).toBe(201);
  });
});
