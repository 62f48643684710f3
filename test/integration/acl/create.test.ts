import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivedState } from '../../../src/api/v1alpha1/index.js';
import { claimKeys, claimName } from '../../../src/acl/policies/grant-claims.js';
import { AclHarness, group, inDays, individual, type Caller } from './support/acl-harness.js';

// POST /policy: who may create, validation against the catalog, 409 on an active grant, all or none,
// read-your-write, and the Idempotency-Key.

const harness = new AclHarness();
const orgId = randomUUID();
let owner: Caller;
let orgAdmin: Caller;
let consumer: Caller;
let otherOrgAdmin: Caller;
let itemId: string;

beforeAll(async () => {
  await harness.start('acl-create');
  owner = await harness.user({ org: orgId });
  orgAdmin = await harness.user({ roles: ['org_admin'], org: orgId });
  consumer = await harness.user();
  otherOrgAdmin = await harness.user({ roles: ['org_admin'], org: randomUUID() });
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
});

afterAll(() => harness.stop());

type Created = { results: { policyId: string }[]; detail: string; type: string };

function create(caller: Caller, request: unknown[], headers: Record<string, string> = {}) {
  return harness.request<Created & { title: string }>('POST', '/policy', {
    caller,
    body: { request },
    headers,
  });
}

describe('who may create', () => {
  it('the item owner: 201 with one policyId per item and a detail stating the count', async () => {
    const answer = await create(owner, [individual(itemId, randomUUID()), individual(itemId, randomUUID())]);
    expect(answer.status).toBe(201);
    expect(answer.body.type).toBe('urn:dx:acl:Success');
    expect(answer.body.detail).toBe('2 policies created');
    expect(answer.body.results).toHaveLength(2);
    const grants = await harness.listGrants();
    const created = grants.filter((grant) =>
      answer.body.results.some((result) => result.policyId === grant.metadata.uid),
    );
    expect(created.map((grant) => grant.spec.issuerId)).toEqual([owner.id, owner.id]);
  });

  it('an org_admin of the item organisation: 201', async () => {
    const answer = await create(orgAdmin, [individual(itemId, randomUUID())]);
    expect(answer.status).toBe(201);
    expect(answer.body.detail).toBe('1 policy created');
  });

  it('a consumer (neither owner nor org admin): 403 naming the item', async () => {
    const answer = await create(consumer, [individual(itemId, consumer.id)]);
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ type: 'urn:dx:acl:Forbidden', title: 'Forbidden' });
    expect(JSON.stringify(answer.body)).toContain(itemId);
  });

  it('an org_admin of another organisation: 403', async () => {
    expect((await create(otherOrgAdmin, [individual(itemId, randomUUID())])).status).toBe(403);
  });

  it('a cos_admin is not a provider: 403', async () => {
    const cosAdmin = await harness.user({ roles: ['cos_admin'] });
    expect((await create(cosAdmin, [individual(itemId, randomUUID())])).status).toBe(403);
  });
});

describe('validation: 400 naming the field', () => {
  const cases: [string, () => unknown, string][] = [
    ['no request array', () => ({}), 'request'],
    ['an empty request', () => ({ request: [] }), 'request'],
    [
      '101 items',
      () => ({ request: Array.from({ length: 101 }, () => individual(itemId, randomUUID())) }),
      'request',
    ],
    [
      'a bad policyType',
      () => ({ request: [{ ...individual(itemId, randomUUID()), policyType: 'TEAM' }] }),
      'request[0].policyType',
    ],
    [
      'INDIVIDUAL without userId',
      () => ({ request: [{ ...individual(itemId, randomUUID()), userId: undefined }] }),
      'request[0].userId',
    ],
    ['a userId that is not a UUID', () => ({ request: [individual(itemId, 'bob')] }), 'request[0].userId'],
    [
      'an expiryTime in the past',
      () => ({ request: [individual(itemId, randomUUID(), ['api'], inDays(-1))] }),
      'request[0].expiryTime',
    ],
    [
      'an expiryTime that is not a date',
      () => ({ request: [individual(itemId, randomUUID(), ['api'], 'tomorrow')] }),
      'request[0].expiryTime',
    ],
    [
      'no access entries',
      () => ({ request: [individual(itemId, randomUUID(), [])] }),
      'request[0].constraints.access',
    ],
    [
      'a repeated access type',
      () => ({ request: [individual(itemId, randomUUID(), ['api', 'api'])] }),
      'request[0].constraints.access',
    ],
    [
      'GROUP without allowedOrgIds',
      () => ({
        request: [{ ...group(itemId, [randomUUID()]), constraints: { access: [{ accessType: 'api' }] } }],
      }),
      'request[0].constraints.subjects.allowedOrgIds',
    ],
    [
      'GROUP with a userId',
      () => ({ request: [{ ...group(itemId, [randomUUID()]), userId: randomUUID() }] }),
      'request[0].userId',
    ],
    [
      'INDIVIDUAL with subjects',
      () => ({
        request: [
          {
            ...individual(itemId, randomUUID()),
            constraints: { access: [{ accessType: 'api' }], subjects: { allowedOrgIds: [randomUUID()] } },
          },
        ],
      }),
      'request[0].constraints.subjects',
    ],
    [
      'an itemType the catalog does not have',
      () => ({ request: [{ ...individual(itemId, randomUUID()), itemType: 'MAP' }] }),
      'request[0].itemType',
    ],
    [
      'an access type the item does not allow',
      () => ({ request: [individual(itemId, randomUUID(), ['api', 'stream'])] }),
      'request[0].constraints.access[1].accessType',
    ],
    [
      'a number where a string belongs',
      () => ({ request: [{ ...individual(itemId, randomUUID()), itemId: 42 }] }),
      'request[0].itemId',
    ],
  ];
  it.each(cases)('%s', async (_name, body, field) => {
    const answer = await harness.request<{ type: string; detail: string }>('POST', '/policy', {
      caller: owner,
      body: body(),
    });
    expect(answer.status).toBe(400);
    expect(answer.body.type).toBe('urn:dx:acl:BadRequest');
    expect(answer.body.detail).toContain(field);
  });

  it('two items for the same user, item and access type: 400 naming both', async () => {
    const userId = randomUUID();
    const answer = await create(owner, [individual(itemId, userId), individual(itemId, userId)]);
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(/request\[1\] repeats request\[0\]/);
  });

  it('malformed JSON: 400; another media type: 415', async () => {
    const malformed = await harness.request('POST', '/policy', { caller: owner, rawBody: '{"request": [' });
    expect(malformed.status).toBe(400);
    const text = await harness.request('POST', '/policy', {
      caller: owner,
      rawBody: 'request',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
  });
});

// Who learns a missing item, and every other catalog answer per caller: item-authority.test.ts.
describe('the catalog', () => {
  it('an itemId that two CatalogItems carry: 409 naming both', async () => {
    const first = await harness.catalogItem({ ownerId: owner.id, organisationId: orgId });
    const second = await harness.catalogItem({
      ownerId: owner.id,
      organisationId: orgId,
      itemId: first.spec.itemId,
    });
    await expect.poll(() => harness.api.cache.itemsWithId(first.spec.itemId).length).toBe(2);
    const answer = await create(owner, [individual(first.spec.itemId, randomUUID())]);
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toContain('ambiguous');
    expect(answer.body.detail).toContain(first.name);
    expect(answer.body.detail).toContain(second.name);
  });
});

describe('conflicts', () => {
  it('an active grant for the same user, item and access type: 409 naming the access types and the user', async () => {
    const userId = randomUUID();
    expect((await create(owner, [individual(itemId, userId, ['api', 'file'])])).status).toBe(201);
    const answer = await create(orgAdmin, [individual(itemId, userId, ['file', 'api', 'sub'])]);
    expect(answer.status).toBe(409);
    expect(answer.body.type).toBe('urn:dx:acl:Conflict');
    expect(answer.body.detail).toContain(`user ${userId}`);
    expect(answer.body.detail).toMatch(/access types (file, api|api, file)/);
    expect(answer.body.detail).not.toContain('sub');
  });

  it('a different access type or a different user does not conflict', async () => {
    const userId = randomUUID();
    expect((await create(owner, [individual(itemId, userId, ['api'])])).status).toBe(201);
    expect((await create(owner, [individual(itemId, userId, ['sub'])])).status).toBe(201);
    expect((await create(owner, [individual(itemId, randomUUID(), ['api'])])).status).toBe(201);
  });

  it('GROUP grants conflict per organisation', async () => {
    const [orgA, orgB] = [randomUUID(), randomUUID()];
    expect((await create(owner, [group(itemId, [orgA])])).status).toBe(201);
    const answer = await create(owner, [group(itemId, [orgB, orgA])]);
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toContain(`members of organisation ${orgA}`);
    expect((await create(owner, [group(itemId, [orgB])])).status).toBe(201);
  });

  it('an active grant applied with kubectl (no claim) conflicts too', async () => {
    const userId = randomUUID();
    const raw = await harness.rawGrant({ ...individual(itemId, userId), policyType: 'INDIVIDUAL' });
    await expect.poll(() => harness.api.cache.grantByUid(raw.metadata.uid ?? '') !== undefined).toBe(true);
    expect((await create(owner, [individual(itemId, userId)])).status).toBe(409);
  });

  it('an active grant whose claim is missing (claims were ConfigMaps before the upgrade) conflicts and gets its claim back', async () => {
    const userId = randomUUID();
    const first = await create(owner, [individual(itemId, userId)]);
    const grant = harness.api.cache.grantByUid(first.body.results[0]?.policyId as string);
    if (!grant) throw new Error('the created grant is not in the cache after its 201');
    const [claim] = claimKeys(grant.spec).map(claimName) as [string];
    await harness.deleteClaim(claim);
    const answer = await create(orgAdmin, [individual(itemId, userId)]);
    expect(answer.status, answer.body.detail).toBe(409);
    expect(answer.body.detail).toContain(`user ${userId}`);
    expect((await harness.getClaim(claim))?.spec).toMatchObject({
      grantName: grant.metadata.name,
      state: 'bound',
    });
    expect((await harness.listGrants()).filter((each) => each.spec.userId === userId)).toHaveLength(1);
  });

  it('a revoked grant does not conflict: its claim is taken over', async () => {
    const userId = randomUUID();
    const first = await create(owner, [individual(itemId, userId)]);
    const policyId = first.body.results[0]?.policyId as string;
    expect((await harness.request('DELETE', `/policy?id=${policyId}`, { caller: owner })).status).toBe(200);
    expect((await create(owner, [individual(itemId, userId)])).status).toBe(201);
  });
});

describe('all or none', () => {
  it('when one item conflicts, none of the others is created, and their claims are released', async () => {
    const taken = randomUUID();
    expect((await create(owner, [individual(itemId, taken)])).status).toBe(201);
    const fresh = randomUUID();
    const before = (await harness.listGrants()).length;
    const answer = await create(owner, [individual(itemId, fresh), individual(itemId, taken)]);
    expect(answer.status).toBe(409);
    const grants = await harness.listGrants();
    expect(grants).toHaveLength(before);
    expect(grants.some((grant) => grant.spec.userId === fresh)).toBe(false);
    // The fresh user's claim was rolled back: granting it alone now works.
    expect((await create(owner, [individual(itemId, fresh)])).status).toBe(201);
  });
});

describe('read your write', () => {
  it("after a 201 the caller's next listing shows the grant", async () => {
    for (let round = 0; round < 5; round++) {
      const answer = await create(owner, [individual(itemId, randomUUID())]);
      const policyId = answer.body.results[0]?.policyId;
      const listing = await harness.request<{ results: { policyId: string }[] }>(
        'GET',
        '/policy/provider?limit=1000',
        { caller: owner },
      );
      expect(listing.body.results.map((row) => row.policyId)).toContain(policyId);
    }
  });
});

describe('Idempotency-Key', () => {
  it('a retry with the same key and body answers the first answer and creates nothing', async () => {
    const key = `key-${randomUUID()}`;
    const request = [individual(itemId, randomUUID()), group(itemId, [randomUUID()])];
    const first = await create(owner, request, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const count = (await harness.listGrants()).length;
    const retry = await create(owner, structuredClone(request), { 'idempotency-key': key });
    expect(retry.status).toBe(201);
    expect(retry.body.results).toEqual(first.body.results);
    expect(retry.body.detail).toBe(first.body.detail);
    expect(await harness.listGrants()).toHaveLength(count);
  });

  it('the same key with another body: 409 naming the Idempotency-Key', async () => {
    const key = `key-${randomUUID()}`;
    expect((await create(owner, [individual(itemId, randomUUID())], { 'idempotency-key': key })).status).toBe(
      201,
    );
    const answer = await create(owner, [individual(itemId, randomUUID())], { 'idempotency-key': key });
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toContain('Idempotency-Key');
  });

  it('the same key from another caller is another request', async () => {
    const key = `key-${randomUUID()}`;
    const first = await create(owner, [individual(itemId, randomUUID())], { 'idempotency-key': key });
    const other = await create(orgAdmin, [individual(itemId, randomUUID())], { 'idempotency-key': key });
    expect(other.status).toBe(201);
    expect(other.body.results).not.toEqual(first.body.results);
  });

  it('concurrent retries with one key and one body all answer 201 with the same policyIds', async () => {
    const key = `key-${randomUUID()}`;
    const request = [individual(itemId, randomUUID(), ['api', 'file'])];
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => create(owner, request, { 'idempotency-key': key })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(201));
    const ids = new Set(answers.map((answer) => JSON.stringify(answer.body.results)));
    expect(ids.size).toBe(1);
  });

  it('a key that is not printable ASCII: 400 naming the header', async () => {
    const answer = await create(owner, [individual(itemId, randomUUID())], {
      'idempotency-key': 'x'.repeat(300),
    });
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toContain('idempotency-key');
  });
});

describe('the grant written', () => {
  it('is a PolicyGrant in the ACL namespace with the request fields, issuerId set, and ACTIVE', async () => {
    const userId = randomUUID();
    const answer = await create(owner, [individual(itemId, userId, ['api', 'sub'])]);
    const grant = (await harness.listGrants()).find(
      (g) => g.metadata.uid === answer.body.results[0]?.policyId,
    );
    expect(grant?.metadata.namespace).toBe(harness.namespace);
    expect(grant?.spec).toMatchObject({
      policyType: 'INDIVIDUAL',
      userId,
      itemId,
      itemType: 'DATABANK',
      issuerId: owner.id,
      constraints: { access: [{ accessType: 'api' }, { accessType: 'sub' }] },
    });
    expect(grant && derivedState(grant, new Date())).toBe('ACTIVE');
  });
});
