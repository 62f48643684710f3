import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAclApi, type RunningAclApi } from '../../../src/cmd/acl-api.js';
import { AclHarness, individual, type Caller } from './support/acl-harness.js';

// The 409 rule under concurrency and across replicas: claims make it hold without a check-then-create race.

const harness = new AclHarness();
let secondReplica: RunningAclApi;
let owner: Caller;
let itemId: string;

beforeAll(async () => {
  await harness.start('acl-concurrency');
  secondReplica = await startAclApi(await harness.config());
  const orgId = randomUUID();
  owner = await harness.user({ org: orgId });
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
});

afterAll(async () => {
  await secondReplica?.stop();
  await harness.stop();
});

async function post(baseUrl: string, body: unknown): Promise<{ status: number; detail: string }> {
  const response = await fetch(`${baseUrl}/policy`, {
    method: 'POST',
    headers: { authorization: owner.authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { detail: string };
  return { status: response.status, detail: answer.detail };
}

describe('50 simultaneous identical creates', () => {
  it('on one replica: exactly one 201 and 49 409s naming the user and access type', async () => {
    const userId = randomUUID();
    const body = { request: [individual(itemId, userId, ['api'])] };
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(harness.api.url, body)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(49);
    for (const answer of answers.filter((a) => a.status === 409)) {
      expect(answer.detail).toContain(`user ${userId}`);
      expect(answer.detail).toContain('access type api');
    }
    const grants = (await harness.listGrants()).filter((grant) => grant.spec.userId === userId);
    expect(grants).toHaveLength(1);
  });

  it('spread over two replicas: exactly one 201', async () => {
    const userId = randomUUID();
    const body = { request: [individual(itemId, userId, ['api', 'file'])] };
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) => post(index % 2 ? secondReplica.url : harness.api.url, body)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(49);
    expect((await harness.listGrants()).filter((grant) => grant.spec.userId === userId)).toHaveLength(1);
  });

  it('overlapping requests (same user, different access type sets): no access type is granted twice', async () => {
    const userId = randomUUID();
    const sets = [['api'], ['api', 'file'], ['file', 'sub'], ['sub'], ['api', 'sub'], ['file']];
    await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        post(index % 2 ? secondReplica.url : harness.api.url, {
          request: [individual(itemId, userId, sets[index % sets.length])],
        }),
      ),
    );
    const granted = (await harness.listGrants())
      .filter((grant) => grant.spec.userId === userId)
      .flatMap((grant) => grant.spec.constraints.access.map((access) => access.accessType));
    expect(granted.sort()).toEqual([...new Set(granted)].sort());
    expect(granted.length).toBeGreaterThan(0);
  });

  it('after a revoke, concurrent re-creates take the vacant claim exactly once', async () => {
    const userId = randomUUID();
    const first = await post(harness.api.url, { request: [individual(itemId, userId)] });
    expect(first.status).toBe(201);
    const [grant] = (await harness.listGrants()).filter((g) => g.spec.userId === userId);
    const revoke = await harness.request('DELETE', `/policy?id=${grant?.metadata.uid}`, { caller: owner });
    expect(revoke.status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        post(index % 2 ? secondReplica.url : harness.api.url, { request: [individual(itemId, userId)] }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(19);
  });
});
