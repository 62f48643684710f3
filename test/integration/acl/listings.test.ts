import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { EVENT_BATCH, memberEvent } from '../../support/member-events.js';
import { createTestNamespace } from '../support/cluster.js';
import { AclHarness, group, inDays, individual, until, type Caller } from './support/acl-harness.js';

// GET /policy/consumer, /provider, /organisation, /platform: viewpoints, roles, status filter, pagination
// edges, a deterministic order, and the verdict on each row (enforced, enforcedReason). GROUP grants reach a
// consumer through Membership objects (made here by membership events), as for verify and the check.

interface Row {
  policyId: string;
  itemId: string;
  itemType: string;
  ownerId?: string;
  status: string;
  enforced: boolean;
  enforcedReason?: string;
  constraints: unknown;
  expiryAt: string;
  consumerId?: string;
}
interface ListingBody {
  type: string;
  title: string;
  results: Row[];
  paginationInfo: { offset: number; limit: number; totalHits: number };
  detail?: string;
}

const harness = new AclHarness();
const [orgA, orgB, consumerOrg] = [randomUUID(), randomUUID(), randomUUID()];
let ownerA: Caller;
let ownerB: Caller;
let adminA: Caller;
let consumer: Caller;
let bulkProvider: Caller;
let itemA: string;
let itemB: string;
const ids: Record<string, string> = {};

function list(caller: Caller, path: string) {
  return harness.request<ListingBody>('GET', path, { caller });
}

async function create(caller: Caller, request: unknown[]): Promise<string[]> {
  const answer = await harness.request<{ results: { policyId: string }[] }>('POST', '/policy', {
    caller,
    body: { request },
  });
  expect(answer.status).toBe(201);
  return answer.body.results.map((result) => result.policyId);
}

beforeAll(async () => {
  await harness.start('acl-listings');
  ownerA = await harness.user({ org: orgA });
  ownerB = await harness.user({ org: orgB });
  adminA = await harness.user({ roles: ['org_admin'], org: orgA });
  consumer = await harness.user({ org: consumerOrg });
  bulkProvider = await harness.user({ org: orgA });
  itemA = (await harness.catalogItem({ ownerId: ownerA.id, organisationId: orgA })).spec.itemId;
  itemB = (await harness.catalogItem({ ownerId: ownerB.id, organisationId: orgB })).spec.itemId;
  const bulkItem = (await harness.catalogItem({ ownerId: bulkProvider.id, organisationId: orgA })).spec
    .itemId;

  [ids.individualA = ''] = await create(ownerA, [individual(itemA, consumer.id, ['api'])]);
  [ids.groupB = ''] = await create(ownerB, [group(itemB, [consumerOrg, randomUUID()], ['file'])]);
  [ids.revokedA = ''] = await create(adminA, [individual(itemA, consumer.id, ['sub'])]);
  await harness.request('DELETE', `/policy?id=${ids.revokedA}`, { caller: adminA });
  const expired = await harness.rawGrant({
    ...individual(itemA, consumer.id, ['file'], inDays(-1)),
    policyType: 'INDIVIDUAL',
    issuerId: ownerA.id,
  });
  ids.expiredA = expired.metadata.uid ?? '';
  [ids.otherConsumerB = ''] = await create(ownerB, [individual(itemB, randomUUID(), ['api'])]);
  await create(
    bulkProvider,
    Array.from({ length: 60 }, () => individual(bulkItem, randomUUID(), ['api'])),
  );
  await until(() => harness.api.cache.grantByUid(ids.expiredA ?? '') !== undefined, 'raw grant cached');
  await addMember(consumerOrg, consumer.id);
});

/** Makes `userId` a member of `organisationId` as a producer does, and waits until the API's cache has it. */
async function addMember(organisationId: string, userId: string): Promise<void> {
  const answer = await harness.request('POST', '/events', {
    caller: await harness.user({ roles: ['event_producer'], org: organisationId }),
    body: [memberEvent('added', { organisationId, userId })],
    headers: { 'content-type': EVENT_BATCH },
  });
  expect(answer.status).toBe(200);
  await until(() => harness.api.cache.isOrganisationMember(organisationId, userId), 'membership cached');
}

afterAll(() => harness.stop());

describe('consumer listing', () => {
  it('shows grants usable by the caller: INDIVIDUAL ones and GROUP ones allowing an organisation it is a member of', async () => {
    const answer = await list(consumer, '/policy/consumer');
    expect(answer.status).toBe(200);
    expect(answer.body.type).toBe('urn:dx:acl:Success');
    const byId = Object.fromEntries(answer.body.results.map((row) => [row.policyId, row]));
    expect(Object.keys(byId).sort()).toEqual(
      [ids.individualA, ids.groupB, ids.revokedA, ids.expiredA].sort(),
    );
    expect(byId[ids.individualA as string]).toEqual({
      policyId: ids.individualA,
      itemId: itemA,
      itemType: 'DATABANK',
      ownerId: ownerA.id,
      status: 'ACTIVE',
      enforced: true,
      constraints: { access: [{ accessType: 'api' }] },
      expiryAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(byId[ids.revokedA as string]).toMatchObject({
      status: 'DELETED',
      enforced: false,
      enforcedReason: 'Revoked',
    });
    expect(byId[ids.expiredA as string]).toMatchObject({
      status: 'EXPIRED',
      enforced: false,
      enforcedReason: 'Expired',
    });
    expect(byId[ids.groupB as string]?.ownerId).toBe(ownerB.id);
    // The grant allows another organisation too: the consumer's listing does not name it.
    expect(byId[ids.groupB as string]?.constraints).toEqual({
      access: [{ accessType: 'file' }],
      subjects: { allowedOrgIds: [consumerOrg] },
    });
    expect(answer.body.paginationInfo).toEqual({ offset: 0, limit: 50, totalHits: 4 });
  });

  it('filters by status', async () => {
    for (const [status, expected] of [
      ['ACTIVE', [ids.individualA, ids.groupB]],
      ['DELETED', [ids.revokedA]],
      ['EXPIRED', [ids.expiredA]],
    ] as const) {
      const answer = await list(consumer, `/policy/consumer?status=${status}`);
      expect(answer.body.results.map((row) => row.policyId).sort(), status).toEqual([...expected].sort());
      expect(answer.body.paginationInfo.totalHits).toBe(expected.length);
    }
  });

  it('GROUP grants by Membership: a member without the claim sees them, a non-member with the claim does not', async () => {
    const member = await harness.user();
    await addMember(consumerOrg, member.id);
    const asMember = await list(member, '/policy/consumer');
    expect(asMember.body.results.map((row) => row.policyId)).toEqual([ids.groupB]);
    const claimOnly = await harness.user({ org: consumerOrg });
    expect((await list(claimOnly, '/policy/consumer')).body.results).toEqual([]);
  });

  it('shows nothing of other users', async () => {
    const stranger = await harness.user();
    const answer = await list(stranger, '/policy/consumer');
    expect(answer.body.results).toEqual([]);
    expect(answer.body.paginationInfo.totalHits).toBe(0);
  });
});

describe('provider listing', () => {
  it('shows the grants the caller issued, each with its consumerId', async () => {
    const answer = await list(ownerA, '/policy/provider');
    expect(answer.body.results.map((row) => row.policyId).sort()).toEqual(
      [ids.individualA, ids.expiredA].sort(),
    );
    expect(answer.body.results.every((row) => row.consumerId === consumer.id)).toBe(true);
  });

  it("leaves out grants outside the API's namespace that name the caller as issuer: issuerId proves nothing there", async () => {
    const org = randomUUID();
    const provider = await harness.user({ org });
    const item = (await harness.catalogItem({ ownerId: provider.id, organisationId: org })).spec.itemId;
    const spec = {
      ...individual(item, randomUUID()),
      policyType: 'INDIVIDUAL' as const,
      issuerId: provider.id,
    };
    const forged = await harness.rawGrant(spec, await createTestNamespace('acl-listings-forged'));
    const bound = await createTestNamespace('acl-listings-bound', { [ORGANISATION_LABEL]: org });
    const gitops = await harness.rawGrant(spec, bound);
    await until(
      () =>
        [forged, gitops].every((grant) => harness.api.cache.grantByUid(grant.metadata.uid ?? '')) &&
        harness.api.cache.organisationOfNamespace(bound) === org,
      'grants and namespace cached',
    );
    const provided = await list(provider, '/policy/provider');
    expect(provided.body.results).toEqual([]);
    const platform = await list(await harness.user({ roles: ['cos_admin'] }), '/policy/platform?limit=1000');
    expect(platform.body.results.find((row) => row.policyId === forged.metadata.uid)).toMatchObject({
      status: 'ACTIVE',
      enforced: false,
      enforcedReason: 'NotAuthorized',
    });
  });

  it('GROUP rows carry their organisations in constraints, not a consumerId', async () => {
    const answer = await list(ownerB, '/policy/provider');
    const groupRow = answer.body.results.find((row) => row.policyId === ids.groupB);
    expect(groupRow?.consumerId).toBeUndefined();
    expect(groupRow?.constraints).toMatchObject({
      subjects: { allowedOrgIds: expect.arrayContaining([consumerOrg]) },
    });
  });
});

describe('organisation listing', () => {
  it("org_admin: grants on the items of the caller's organisation only", async () => {
    const answer = await list(adminA, '/policy/organisation?limit=1000');
    expect(answer.status).toBe(200);
    const found = answer.body.results.map((row) => row.policyId);
    expect(found).toEqual(expect.arrayContaining([ids.individualA, ids.revokedA, ids.expiredA]));
    expect(found).not.toContain(ids.groupB);
    expect(found).not.toContain(ids.otherConsumerB);
    expect(answer.body.paginationInfo.totalHits).toBe(63);
    expect(answer.body.results.every((row) => row.consumerId === undefined)).toBe(true);
  });

  it('without role org_admin: 403', async () => {
    const answer = await list(ownerA, '/policy/organisation');
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ type: 'urn:dx:acl:Forbidden', detail: 'requires role org_admin' });
  });

  it('org_admin without an organisation claim holds no org_admin role: 403', async () => {
    const answer = await list(await harness.user({ roles: ['org_admin'] }), '/policy/organisation');
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toBe('requires role org_admin');
  });
});

describe('an itemId that CatalogItems of two organisations carry', () => {
  it("is neither organisation's: its grants are in no organisation listing", async () => {
    const [victimOrg, attackerOrg] = [randomUUID(), randomUUID()];
    const victim = await harness.user({ org: victimOrg });
    const item = (await harness.catalogItem({ ownerId: victim.id, organisationId: victimOrg })).spec.itemId;
    const [policyId] = await create(victim, [individual(item, randomUUID(), ['api'])]);
    const victimAdmin = await harness.user({ roles: ['org_admin'], org: victimOrg });
    const before = await list(victimAdmin, '/policy/organisation');
    expect(before.body.results.map((row) => row.policyId)).toEqual([policyId]);
    // Another organisation's CatalogItem with the same itemId (a catalog editor of that organisation made it).
    const attacker = await harness.user({ roles: ['org_admin'], org: attackerOrg });
    await harness.catalogItem({ ownerId: attacker.id, organisationId: attackerOrg, itemId: item });
    await until(() => harness.api.cache.itemsWithId(item).length === 2, 'both items cached');
    expect((await list(attacker, '/policy/organisation')).body.results).toEqual([]);
    expect((await list(victimAdmin, '/policy/organisation')).body.results).toEqual([]);
  });
});

describe('platform listing', () => {
  it('cos_admin: every grant', async () => {
    const cosAdmin = await harness.user({ roles: ['cos_admin'] });
    const answer = await list(cosAdmin, '/policy/platform?limit=1000');
    expect(answer.status).toBe(200);
    const found = answer.body.results.map((row) => row.policyId);
    expect(found).toEqual(expect.arrayContaining(Object.values(ids)));
    expect(answer.body.paginationInfo.totalHits).toBeGreaterThanOrEqual(65);
  });

  it('without role cos_admin (org_admin is not enough): 403', async () => {
    expect((await list(adminA, '/policy/platform')).status).toBe(403);
  });
});

describe('pagination', () => {
  it('defaults to limit 50, offset 0', async () => {
    const answer = await list(bulkProvider, '/policy/provider');
    expect(answer.body.results).toHaveLength(50);
    expect(answer.body.paginationInfo).toEqual({ offset: 0, limit: 50, totalHits: 60 });
  });

  it('pages are disjoint, cover everything, and follow creationTimestamp then policyId', async () => {
    const all = (await list(bulkProvider, '/policy/provider?limit=1000')).body.results.map(
      (row) => row.policyId,
    );
    const pages: string[] = [];
    for (let offset = 0; offset < 60; offset += 7) {
      const page = await list(bulkProvider, `/policy/provider?limit=7&offset=${offset}`);
      expect(page.body.paginationInfo).toEqual({ offset, limit: 7, totalHits: 60 });
      pages.push(...page.body.results.map((row) => row.policyId));
    }
    expect(pages).toEqual(all);
    const created = (uid: string) =>
      harness.api.cache.grantByUid(uid)?.metadata.creationTimestamp as unknown as string;
    const expected = [...all].sort(
      (a, b) => created(a).localeCompare(created(b)) || (a < b ? -1 : a > b ? 1 : 0),
    );
    expect(all).toEqual(expected);
    expect(
      (await list(bulkProvider, '/policy/provider?limit=1000')).body.results.map((row) => row.policyId),
    ).toEqual(all);
  });

  it('limit 1 and 1000 are accepted; an offset past the end gives an empty page with totalHits', async () => {
    expect((await list(bulkProvider, '/policy/provider?limit=1')).body.results).toHaveLength(1);
    expect((await list(bulkProvider, '/policy/provider?limit=1000')).body.results).toHaveLength(60);
    const past = await list(bulkProvider, '/policy/provider?offset=500');
    expect(past.body.results).toEqual([]);
    expect(past.body.paginationInfo).toEqual({ offset: 500, limit: 50, totalHits: 60 });
  });

  const bad: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=', 'limit'],
    ['limit=1e2', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=abc', 'offset'],
    ['offset=99999999999999999999', 'offset'],
    ['status=active', 'status'],
    ['status=REVOKED', 'status'],
  ];
  it.each(bad)('%s: 400 naming %s', async (query, field) => {
    for (const path of ['/policy/consumer', '/policy/provider']) {
      const answer = await list(consumer, `${path}?${query}`);
      expect(answer.status).toBe(400);
      expect(answer.body.type).toBe('urn:dx:acl:BadRequest');
      expect(answer.body.detail?.startsWith(`${field}: `)).toBe(true);
    }
  });
});
