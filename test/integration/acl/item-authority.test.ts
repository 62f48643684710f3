import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AclHarness, individual, until, type Caller } from './support/acl-harness.js';

// Authority before item facts: POST /policy tells what the catalog holds about an itemId (missing: 404,
// ambiguous: 409, another itemType or an access type the item does not list: 400) only to a caller who could
// grant on the item as named, or to a cos_admin; everyone else gets one and the same 403.

const harness = new AclHarness();
const orgId = randomUUID();
const callers: Record<string, Caller> = {};
/** The itemId of each kind of item, and the body a create sends for it. */
const items: Record<string, { itemId: string; request: () => unknown[] }> = {};

beforeAll(async () => {
  await harness.start('acl-item-authority');
  callers.stranger = await harness.user();
  callers['org_admin of another organisation'] = await harness.user({
    roles: ['org_admin'],
    org: randomUUID(),
  });
  callers.owner = await harness.user({ org: orgId });
  callers.org_admin = await harness.user({ roles: ['org_admin'], org: orgId });
  callers.cos_admin = await harness.user({ roles: ['cos_admin'] });
  const item = () => harness.catalogItem({ ownerId: callers.owner?.id ?? '', organisationId: orgId });
  const asNamed = (await item()).spec.itemId;
  const ambiguous = (await item()).spec.itemId;
  await harness.catalogItem({ ownerId: callers.owner?.id ?? '', organisationId: orgId, itemId: ambiguous });
  const missing = `urn:dx:item:missing-${randomUUID()}`;
  await until(() => harness.api.cache.itemsWithId(ambiguous).length === 2, 'both items cached');
  items['as named'] = { itemId: asNamed, request: () => [individual(asNamed, randomUUID())] };
  items.missing = { itemId: missing, request: () => [individual(missing, randomUUID())] };
  items.ambiguous = { itemId: ambiguous, request: () => [individual(ambiguous, randomUUID())] };
  items['of another itemType'] = {
    itemId: asNamed,
    request: () => [{ ...individual(asNamed, randomUUID()), itemType: 'MAP' }],
  };
  items['without the access type'] = {
    itemId: asNamed,
    request: () => [individual(asNamed, randomUUID(), ['api', 'stream'])],
  };
});

afterAll(() => harness.stop());

/** caller → item → status; 403 wherever the caller may not grant on the item as named. */
const MATRIX: Record<string, Record<string, number>> = {
  stranger: {
    'as named': 403,
    missing: 403,
    ambiguous: 403,
    'of another itemType': 403,
    'without the access type': 403,
  },
  'org_admin of another organisation': {
    'as named': 403,
    missing: 403,
    ambiguous: 403,
    'of another itemType': 403,
    'without the access type': 403,
  },
  owner: {
    'as named': 201,
    missing: 403,
    ambiguous: 409,
    'of another itemType': 400,
    'without the access type': 400,
  },
  org_admin: {
    'as named': 201,
    missing: 403,
    ambiguous: 409,
    'of another itemType': 400,
    'without the access type': 400,
  },
  cos_admin: {
    'as named': 403,
    missing: 404,
    ambiguous: 409,
    'of another itemType': 400,
    'without the access type': 400,
  },
};

const cases = Object.entries(MATRIX).flatMap(([caller, row]) =>
  Object.entries(row).map(([item, status]) => ({ caller, item, status })),
);

function create(caller: string, item: string) {
  return harness.request<{ type: string; detail: string }>('POST', '/policy', {
    caller: callers[caller] as Caller,
    body: { request: items[item]?.request() },
  });
}

describe('POST /policy: authority before item facts', () => {
  it.each(cases)('$caller, an item $item: $status', async ({ caller, item, status }) => {
    const answer = await create(caller, item);
    expect(answer.status, answer.body.detail).toBe(status);
  });

  it('the 403 is the same answer whatever the catalog holds', async () => {
    const details = await Promise.all(
      Object.keys(items).map(async (item) => {
        const answer = await create('stranger', item);
        return answer.body.detail.replace(items[item]?.itemId ?? '', '<itemId>');
      }),
    );
    expect(new Set(details).size, details.join('\n')).toBe(1);
  });

  it('a cos_admin learns a missing item (404 naming it), the others only 403', async () => {
    const answer = await create('cos_admin', 'missing');
    expect(answer.body.type).toBe('urn:dx:acl:NotFound');
    expect(answer.body.detail).toContain(items.missing?.itemId);
  });

  it('an owner of one of two CatalogItems with one itemId: 403 (the other is not theirs)', async () => {
    const owner = await harness.user({ org: orgId });
    const shared = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
    await harness.catalogItem({ ownerId: randomUUID(), organisationId: randomUUID(), itemId: shared });
    await expect.poll(() => harness.api.cache.itemsWithId(shared).length).toBe(2);
    const answer = await harness.request<{ detail: string }>('POST', '/policy', {
      caller: owner,
      body: { request: [individual(shared, randomUUID())] },
    });
    expect(answer.status).toBe(403);
    expect(answer.body.detail).not.toContain('ambiguous');
  });
});

describe('POST /verify: a stranger learns nothing about the item', () => {
  it('the same 403 for an existing and a missing item', async () => {
    const userId = randomUUID();
    const answers = await Promise.all(
      ['as named', 'missing'].map(async (item) => {
        const itemId = items[item]?.itemId ?? '';
        const answer = await harness.request<{ title: string; detail: string }>('POST', '/verify', {
          caller: callers.stranger as Caller,
          body: { user: { id: userId }, item: { itemId } },
        });
        return {
          status: answer.status,
          title: answer.body.title,
          detail: answer.body.detail.replace(itemId, '<itemId>'),
        };
      }),
    );
    expect(answers[0]).toMatchObject({ status: 403, title: 'Not allowed to verify' });
    expect(answers[1]).toEqual(answers[0]);
  });
});
