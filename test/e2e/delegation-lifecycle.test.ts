import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CatalogItem } from '../../src/api/v1alpha1/index.js';
import { SHORT_LIFETIME_MS } from '../support/timeouts.js';
import { acl, check, e2e, eventually, sampleItemParties, token } from './support/stack-client.js';

// The delegation lifecycle from outside, through `npm start`: an owner holding an api grant delegates querier to
// an agent over HTTP; the agent is allowed; another user claiming the agent gets 409; the owner losing the grant
// denies the agent; revoking the delegation denies it; a delegation expires.

let item: CatalogItem['spec'];
let provider: string;
/** An enforcement point: only they may call /v1/check. */
let checker: string;

beforeAll(async () => {
  ({ item, owner: provider, checker } = await sampleItemParties());
});

const inOneYear = () => new Date(Date.now() + 365 * 86_400_000).toISOString();

async function grantApi(userId: string): Promise<string> {
  const reply = await acl<{ results: { policyId: string }[] }>('/policy', {
    method: 'POST',
    token: provider,
    body: {
      request: [
        {
          policyType: 'INDIVIDUAL',
          userId,
          itemId: item.itemId,
          itemType: item.itemType,
          expiryTime: inOneYear(),
          constraints: { access: [{ accessType: 'api' }] },
        },
      ],
    },
  });
  expect(reply.status).toBe(201);
  return reply.body.results[0]?.policyId ?? '';
}

async function revokeGrant(policyId: string): Promise<void> {
  expect((await acl(`/policy?id=${policyId}`, { method: 'DELETE', token: provider })).status).toBe(200);
}

function delegate(ownerToken: string, agentId: string, expiryTime = inOneYear(), relation = 'querier') {
  return acl<{ results: { delegationId: string }[]; detail?: string }>('/delegations', {
    method: 'POST',
    token: ownerToken,
    body: { agentId, itemId: item.itemId, relation, expiryTime },
  });
}

/** DELETE answers 204 without a body, which the stack client's JSON reader does not take. */
async function revokeDelegation(ownerToken: string, delegationId: string): Promise<number> {
  const response = await fetch(`${e2e().gatewayUrl}/acl/delegations/${delegationId}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${ownerToken}` },
  });
  return response.status;
}

const agentAllowed = async (agentId: string) =>
  (
    await check(checker, {
      subject_type: 'agent',
      subject_id: agentId,
      resource_type: 'resource',
      resource_id: item.itemId,
      relation: 'delegated_querier',
    })
  ).body.result.allowed;

const agentBecomes = (agentId: string, expected: boolean) =>
  eventually(`the agent's check to be ${expected}`, async () =>
    (await agentAllowed(agentId)) === expected ? true : undefined,
  );

describe('a delegation to an agent, from the outside', () => {
  it('allows the agent while the owner holds the grant and the delegation is active', async () => {
    const ownerId = randomUUID();
    const owner = await token(ownerId);
    const agentId = `urn:dx:agent:${randomUUID()}`;
    const policyId = await grantApi(ownerId);

    const created = await delegate(owner, agentId);
    expect(created.status).toBe(201);
    const delegationId = created.body.results[0]?.delegationId ?? '';
    await agentBecomes(agentId, true);

    // viewer: a querier delegation by a user without an api policy is refused (403) before the agent is looked at
    const other = await token(randomUUID());
    const claimed = await delegate(other, agentId, inOneYear(), 'viewer');
    expect(claimed.status).toBe(409);

    const listed = await acl<{ results: { delegationId: string; status: string }[] }>('/delegations', {
      token: owner,
    });
    expect(listed.body.results).toEqual([expect.objectContaining({ delegationId, status: 'ACTIVE' })]);
    expect((await acl(`/delegations/${delegationId}`, { token: other })).status).toBe(403);

    await revokeGrant(policyId);
    await agentBecomes(agentId, false);

    await grantApi(ownerId);
    await agentBecomes(agentId, true);
    expect(await revokeDelegation(owner, delegationId)).toBe(204);
    await agentBecomes(agentId, false);
    const revoked = await acl<{ results: { status: string }[] }>(`/delegations/${delegationId}`, {
      token: owner,
    });
    expect(revoked.body.results[0]?.status).toBe('DELETED');
  });

  it('denies the agent once the delegation expires', async () => {
    const ownerId = randomUUID();
    const owner = await token(ownerId);
    const agentId = `urn:dx:agent:${randomUUID()}`;
    await grantApi(ownerId);
    const expiresAt = new Date(Date.now() + SHORT_LIFETIME_MS).toISOString();

    expect((await delegate(owner, agentId, expiresAt)).status).toBe(201);
    await agentBecomes(agentId, true);
    await agentBecomes(agentId, false);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
  });
});
