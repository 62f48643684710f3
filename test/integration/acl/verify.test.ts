import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { createTestNamespace } from '../support/cluster.js';
import {
  AclHarness,
  BASIC_SECRET,
  ENFORCER_CLIENT_ID,
  group,
  inDays,
  individual,
  until,
  type Caller,
} from './support/acl-harness.js';

// POST /verify: active, revoked, expired and GROUP grants (membership from Membership objects), who may ask,
// validation, and grants applied with kubectl outside their organisation's namespaces. Every case of the
// verdict against the controller: test/integration/verdict.

interface VerifyResult {
  id: string;
  constraints: unknown;
  expiryAt: string;
}

interface VerifyBody extends Partial<VerifyResult> {
  type: string;
  title: string;
  detail?: string;
  results?: VerifyResult[];
}

const harness = new AclHarness();
const orgId = randomUUID();
let owner: Caller;
let itemId: string;

beforeAll(async () => {
  await harness.start('acl-verify');
  owner = await harness.user({ org: orgId });
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
});

afterAll(() => harness.stop());

async function grant(request: unknown): Promise<string> {
  const answer = await harness.request<{ results: { policyId: string }[] }>('POST', '/policy', {
    caller: owner,
    body: { request: [request] },
  });
  expect(answer.status).toBe(201);
  return answer.body.results[0]?.policyId as string;
}

function verify(caller: Caller, userId: string, item = itemId) {
  return harness.request<VerifyBody>('POST', '/verify', {
    caller,
    body: { user: { id: userId }, item: { itemId: item } },
  });
}

function expectNoAccess(answer: { status: number; body: VerifyBody }) {
  expect(answer.status).toBe(403);
  expect(answer.body).toMatchObject({ type: 'urn:dx:acl:Forbidden', title: 'No active policy' });
  expect(answer.body.detail).toContain('no active policy');
}

describe('grants that count', () => {
  it('an active INDIVIDUAL grant: 200 with id, constraints and expiryAt on top and in results', async () => {
    const user = await harness.user();
    const expiryTime = inDays(10);
    const id = await grant(individual(itemId, user.id, ['api', 'file'], expiryTime));
    const answer = await verify(user, user.id);
    expect(answer.status).toBe(200);
    const result = {
      id,
      constraints: { access: [{ accessType: 'api' }, { accessType: 'file' }] },
      expiryAt: expiryTime,
    };
    expect(answer.body).toEqual({
      type: 'urn:dx:acl:Success',
      title: 'Active policy found',
      ...result,
      results: [result],
    });
  });

  it('several grants: the one that expires last on top', async () => {
    const user = await harness.user();
    const later = await grant(individual(itemId, user.id, ['file'], inDays(20)));
    await grant(individual(itemId, user.id, ['api'], inDays(5)));
    const answer = await verify(user, user.id);
    expect(answer.body).toMatchObject({ id: later, expiryAt: expect.any(String) });
    expect(answer.body.results).toHaveLength(2);
  });

  it('several active grants: all of them, oldest first', async () => {
    const user = await harness.user();
    const first = await grant(individual(itemId, user.id, ['api']));
    const second = await grant(individual(itemId, user.id, ['sub']));
    const answer = await verify(user, user.id);
    expect(answer.body.results?.map((result) => result.id)).toEqual(
      [first, second].sort((a, b) => {
        const created = (uid: string) =>
          String(harness.api.cache.grantByUid(uid)?.metadata.creationTimestamp);
        return created(a).localeCompare(created(b)) || a.localeCompare(b);
      }),
    );
  });

  it('a revoked grant: 403 Forbidden body', async () => {
    const user = await harness.user();
    const id = await grant(individual(itemId, user.id));
    expect((await verify(user, user.id)).status).toBe(200);
    await harness.request('DELETE', `/policy?id=${id}`, { caller: owner });
    expectNoAccess(await verify(user, user.id));
  });

  it('an expired grant: 403', async () => {
    const user = await harness.user();
    const expired = await harness.rawGrant({
      ...individual(itemId, user.id, ['api'], inDays(-1)),
      policyType: 'INDIVIDUAL',
      issuerId: owner.id,
    });
    await until(() => harness.api.cache.grantByUid(expired.metadata.uid ?? '') !== undefined, 'cached');
    expectNoAccess(await verify(user, user.id));
  });

  it('a grant on another item does not count', async () => {
    const user = await harness.user();
    await grant(individual(itemId, user.id));
    const other = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
    expectNoAccess(await verify(user, user.id, other));
  });

  it('a GROUP grant counts for members of an allowed organisation (a Membership), not for others', async () => {
    const [memberOrg, otherOrg] = [randomUUID(), randomUUID()];
    const id = await grant(group(itemId, [otherOrg, memberOrg], ['file']));
    const member = await harness.user();
    const outsider = await harness.user({ org: memberOrg });
    await harness.addMember(memberOrg, member.id);
    const answer = await verify(member, member.id);
    expect(answer.status).toBe(200);
    expect(answer.body.results?.map((result) => result.id)).toEqual([id]);
    // The organisation claim of a token is not membership: only a Membership says who is a member.
    expectNoAccess(await verify(outsider, outsider.id));
  });

  it('a revoked GROUP grant does not count for a member', async () => {
    const org = randomUUID();
    const id = await grant(group(itemId, [org]));
    const member = await harness.user();
    await harness.addMember(org, member.id);
    expect((await verify(member, member.id)).status).toBe(200);
    await harness.request('DELETE', `/policy?id=${id}`, { caller: owner });
    expectNoAccess(await verify(member, member.id));
  });

  it('a grant applied with kubectl counts only in a namespace bound to the item organisation', async () => {
    const user = await harness.user();
    const unbound = await createTestNamespace('acl-verify-unbound');
    const bound = await createTestNamespace('acl-verify-bound', { [ORGANISATION_LABEL]: orgId });
    const spec = { ...individual(itemId, user.id), policyType: 'INDIVIDUAL' as const, issuerId: owner.id };
    const outside = await harness.rawGrant(spec, unbound);
    await until(() => harness.api.cache.grantByUid(outside.metadata.uid ?? '') !== undefined, 'cached');
    expectNoAccess(await verify(user, user.id));
    const inside = await harness.rawGrant(
      { ...spec, constraints: { access: [{ accessType: 'sub' }] } },
      bound,
    );
    await until(
      () =>
        harness.api.cache.grantByUid(inside.metadata.uid ?? '') !== undefined &&
        harness.api.cache.organisationOfNamespace(bound) === orgId,
      'cached',
    );
    const answer = await verify(user, user.id);
    expect(answer.body.results?.map((result) => result.id)).toEqual([inside.metadata.uid]);
  });
});

describe('who may verify', () => {
  let consumerId: string;
  beforeAll(async () => {
    consumerId = randomUUID();
    await grant(individual(itemId, consumerId));
  });

  it('the item owner, an org_admin of its organisation, a cos_admin, and an enforcement point', async () => {
    for (const caller of [
      owner,
      await harness.user({ roles: ['org_admin'], org: orgId }),
      await harness.user({ roles: ['cos_admin'] }),
      harness.basicCaller(BASIC_SECRET, ENFORCER_CLIENT_ID),
    ]) {
      expect((await verify(caller, consumerId)).status).toBe(200);
    }
  });

  it('another user, an org_admin of another organisation, or an application without decision_client: 403 "Not allowed to verify"', async () => {
    for (const caller of [
      await harness.user(),
      await harness.user({ roles: ['org_admin'], org: randomUUID() }),
      harness.basicCaller(),
    ]) {
      const answer = await verify(caller, consumerId);
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ type: 'urn:dx:acl:Forbidden', title: 'Not allowed to verify' });
    }
  });
});

describe('validation', () => {
  const cases: [string, unknown, string][] = [
    ['no body', undefined, 'body'],
    ['no user', { item: { itemId: 'urn:x' } }, 'user'],
    ['a user id that is not a UUID', { user: { id: 'alice' }, item: { itemId: 'urn:x' } }, 'user.id'],
    ['no item', { user: { id: randomUUID() } }, 'item'],
    ['an empty itemId', { user: { id: randomUUID() }, item: { itemId: '' } }, 'item.itemId'],
    ['an itemId that is a number', { user: { id: randomUUID() }, item: { itemId: 7 } }, 'item.itemId'],
    ['an array', [], 'body'],
  ];
  it.each(cases)('%s: 400 naming %s', async (_name, body, field) => {
    const answer = await harness.request<VerifyBody>('POST', '/verify', {
      caller: owner,
      ...(body === undefined ? {} : { body }),
    });
    expect(answer.status).toBe(400);
    expect(answer.body.detail?.startsWith(field)).toBe(true);
  });
});
