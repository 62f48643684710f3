import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimKeys, claimName } from '../../../src/acl/policies/grant-claims.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { createTestNamespace } from '../support/cluster.js';
import { AclHarness, individual, until, type Caller } from './support/acl-harness.js';

// DELETE /policy?id=: who may revoke, soft delete (the record stays and reads DELETED), 404, and a second
// delete that changes nothing.

const harness = new AclHarness();
const orgId = randomUUID();
let owner: Caller;
let orgAdmin: Caller;
let issuer: Caller;
let itemId: string;

beforeAll(async () => {
  await harness.start('acl-delete');
  owner = await harness.user({ org: orgId });
  orgAdmin = await harness.user({ roles: ['org_admin'], org: orgId });
  issuer = orgAdmin;
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
});

afterAll(() => harness.stop());

async function grantBy(caller: Caller, userId = randomUUID()): Promise<string> {
  const answer = await harness.request<{ results: { policyId: string }[] }>('POST', '/policy', {
    caller,
    body: { request: [individual(itemId, userId, ['api', 'file'])] },
  });
  expect(answer.status).toBe(201);
  return answer.body.results[0]?.policyId as string;
}

function remove(caller: Caller | undefined, id: string) {
  return harness.request<{ type: string; title: string; detail: string; results?: unknown }>(
    'DELETE',
    `/policy?id=${encodeURIComponent(id)}`,
    caller ? { caller } : {},
  );
}

describe('who may delete', () => {
  it('the issuer: 200, an envelope without results whose detail states the count', async () => {
    const answer = await remove(issuer, await grantBy(issuer));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ type: 'urn:dx:acl:Success', title: 'Deleted', detail: '1 policy deleted' });
  });

  it('the item owner, for a grant someone else issued', async () => {
    expect((await remove(owner, await grantBy(orgAdmin))).status).toBe(200);
  });

  it('an org_admin of the item organisation, for a grant the owner issued', async () => {
    expect((await remove(orgAdmin, await grantBy(owner))).status).toBe(200);
  });

  it('a cos_admin', async () => {
    const cosAdmin = await harness.user({ roles: ['cos_admin'] });
    expect((await remove(cosAdmin, await grantBy(owner))).status).toBe(200);
  });

  it('the consumer, another user, or an org_admin of another organisation: 403, and the grant stays ACTIVE', async () => {
    const consumerId = randomUUID();
    const policyId = await grantBy(owner, consumerId);
    for (const caller of [
      await harness.user({ id: consumerId }),
      await harness.user(),
      await harness.user({ roles: ['org_admin'], org: randomUUID() }),
    ]) {
      const answer = await remove(caller, policyId);
      expect(answer.status).toBe(403);
      expect(answer.body.type).toBe('urn:dx:acl:Forbidden');
      expect(answer.body.detail, 'names no item').not.toContain(itemId);
    }
    expect(harness.api.cache.grantByUid(policyId)?.spec.revokedAt).toBeUndefined();
  });

  it('without credentials: 401', async () => {
    expect((await remove(undefined, randomUUID())).status).toBe(401);
  });
});

describe('ids', () => {
  it('an unknown id: 404 naming it', async () => {
    const id = randomUUID();
    const answer = await remove(owner, id);
    expect(answer.status).toBe(404);
    expect(answer.body.detail).toContain(id);
  });

  it('a missing or malformed id: 400 naming id', async () => {
    for (const path of ['/policy', '/policy?id=', '/policy?id=not-a-uuid', '/policy?id=a&id=b']) {
      const answer = await harness.request<{ detail: string }>('DELETE', path, { caller: owner });
      expect(answer.status, path).toBe(400);
      expect(answer.body.detail).toMatch(/^id: /);
    }
  });
});

describe('grants applied with kubectl', () => {
  it('are not revoked through the API: 409 naming the namespace where they are managed, and nothing changes', async () => {
    const gitops = await createTestNamespace('acl-delete-gitops', { [ORGANISATION_LABEL]: orgId });
    const grant = await harness.rawGrant(
      { ...individual(itemId, randomUUID()), policyType: 'INDIVIDUAL' as const, issuerId: owner.id },
      gitops,
    );
    const id = grant.metadata.uid as string;
    await until(() => harness.api.cache.grantByUid(id) !== undefined, 'cached');
    const answer = await remove(owner, id);
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toContain(`namespace ${gitops}`);
    expect((await harness.getGrant(grant.metadata.name as string, gitops)).spec.revokedAt).toBeUndefined();
  });
});

describe('soft delete', () => {
  it('keeps the record, sets revokedAt/revokedBy, and flips its status to DELETED in the listings', async () => {
    const consumerId = randomUUID();
    const policyId = await grantBy(owner, consumerId);
    expect((await remove(orgAdmin, policyId)).status).toBe(200);

    const grant = harness.api.cache.grantByUid(policyId);
    const stored = await harness.getGrant(grant?.metadata.name as string);
    expect(stored.spec.revokedBy).toBe(orgAdmin.id);
    expect(Date.parse(stored.spec.revokedAt as string)).toBeGreaterThan(Date.now() - 60_000);

    const consumer = await harness.user({ id: consumerId });
    const listing = await harness.request<{ results: { policyId: string; status: string }[] }>(
      'GET',
      '/policy/consumer',
      { caller: consumer },
    );
    expect(listing.body.results).toEqual([expect.objectContaining({ policyId, status: 'DELETED' })]);
    const deleted = await harness.request<{ results: { policyId: string }[] }>(
      'GET',
      '/policy/consumer?status=DELETED',
      { caller: consumer },
    );
    expect(deleted.body.results.map((row) => row.policyId)).toEqual([policyId]);
    const active = await harness.request<{ results: unknown[] }>('GET', '/policy/consumer?status=ACTIVE', {
      caller: consumer,
    });
    expect(active.body.results).toEqual([]);
  });

  it('releases the claims, so the same access can be granted again', async () => {
    const consumerId = randomUUID();
    const policyId = await grantBy(owner, consumerId);
    const grant = harness.api.cache.grantByUid(policyId);
    if (!grant) throw new Error(`grant ${policyId} is not in the cache after its 201`);
    const claims = claimKeys(grant.spec).map(claimName);
    expect(claims).toHaveLength(2); // api and file
    for (const name of claims) {
      expect((await harness.getClaim(name))?.spec).toMatchObject({
        grantName: grant.metadata.name,
        state: 'bound',
      });
    }

    expect((await remove(owner, policyId)).status).toBe(200);
    for (const name of claims) expect(await harness.getClaim(name)).toBeUndefined();
    await grantBy(owner, consumerId);
  });

  it('a second delete answers 200 "0 policies deleted; <id> was already deleted at <revokedAt>" and changes nothing', async () => {
    const policyId = await grantBy(owner);
    expect((await remove(owner, policyId)).status).toBe(200);
    const name = harness.api.cache.grantByUid(policyId)?.metadata.name as string;
    const before = await harness.getGrant(name);
    const again = await remove(orgAdmin, policyId);
    expect(again.status).toBe(200);
    expect(again.body.detail).toBe(
      `0 policies deleted; ${policyId} was already deleted at ${before.spec.revokedAt}`,
    );
    const after = await harness.getGrant(name);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.revokedBy).toBe(owner.id);
  });

  it('concurrent deletes of one policy: every answer is 200, exactly one says it deleted', async () => {
    const policyId = await grantBy(owner);
    const answers = await Promise.all(Array.from({ length: 10 }, () => remove(owner, policyId)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(answers.filter((answer) => answer.body.detail === '1 policy deleted')).toHaveLength(1);
  });
});
