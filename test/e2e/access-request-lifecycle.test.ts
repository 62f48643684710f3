import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AccessRequest, CatalogItem } from '../../src/api/v1alpha1/index.js';
import {
  acl,
  e2e,
  eventually,
  kubectlJson,
  sampleItemParties,
  token,
  userAllowed,
} from './support/stack-client.js';

// The access-request lifecycle from outside, through `npm start`: a consumer asks over HTTP, the item's owner
// approves with the request's ETag, and the consumer is allowed by /v1/check; a consumer withdraws, and nothing
// is granted; only the owner decides, with an If-Match; an approval that would conflict with a grant made
// meanwhile answers 409 and the owner rejects instead; kubectl shows the state. (Expiry of a pending request
// needs a TTL shorter than the stack's: test/integration/controller/access-requests.test.ts proves it.)

let item: CatalogItem['spec'];
let provider: string;
/** An enforcement point: only they may call /v1/check. */
let checker: string;

interface Row {
  requestId: string;
  status: string;
  policyIds: string[];
}

beforeAll(async () => {
  ({ item, owner: provider, checker } = await sampleItemParties());
});

const inOneYear = () => new Date(Date.now() + 365 * 86_400_000).toISOString();

async function ask(consumerToken: string): Promise<{ requestId: string; etag: string }> {
  const reply = await acl<{ results: { requestId: string }[] }>('/access-requests', {
    method: 'POST',
    token: consumerToken,
    body: {
      itemId: item.itemId,
      itemType: item.itemType,
      access: [{ accessType: 'api' }],
      expiryTime: inOneYear(),
      purpose: 'e2e',
    },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return { requestId: reply.body.results[0]?.requestId ?? '', etag: reply.headers.get('etag') ?? '' };
}

function decide(callerToken: string, requestId: string, etag: string | undefined, status: string) {
  return acl<{ results: Row[] }>(`/access-requests/${requestId}`, {
    method: 'PATCH',
    token: callerToken,
    body: { status },
    ...(etag === undefined ? {} : { headers: { 'if-match': etag } }),
  });
}

/** The grant the consumer's request asks for, made by the owner directly through POST /policy. */
async function grantDirectly(consumerId: string): Promise<void> {
  const reply = await acl('/policy', {
    method: 'POST',
    token: provider,
    body: {
      request: [
        {
          policyType: 'INDIVIDUAL',
          userId: consumerId,
          itemId: item.itemId,
          itemType: item.itemType,
          expiryTime: inOneYear(),
          constraints: { access: [{ accessType: 'api' }] },
        },
      ],
    },
  });
  expect(reply.status).toBe(201);
}

const allowed = (userId: string) => userAllowed(checker, userId, item.itemId);

async function stateInKubernetes(requestId: string): Promise<string | undefined> {
  const list = await kubectlJson<{ items: AccessRequest[] }>('get', 'accessrequests', '-n', e2e().namespace);
  return list.items.find((request) => request.metadata.uid === requestId)?.status?.state;
}

describe('an access request, from the outside', () => {
  it('request → approve with the ETag → the consumer is allowed by /v1/check', async () => {
    const consumerId = randomUUID();
    const consumer = await token(consumerId);
    const { requestId, etag } = await ask(consumer);
    expect(await stateInKubernetes(requestId)).toBe('PENDING');
    expect(await allowed(consumerId)).toBe(false);

    const listed = await acl<{ results: Row[] }>('/access-requests/provider?status=PENDING&limit=1000', {
      token: provider,
    });
    expect(listed.body.results.map((row) => row.requestId)).toContain(requestId);

    const approved = await decide(provider, requestId, etag, 'APPROVED');
    expect(approved.status).toBe(200);
    expect(approved.body.results[0]).toMatchObject({ requestId, status: 'APPROVED' });
    expect(approved.body.results[0]?.policyIds).toHaveLength(1);
    await eventually('the consumer to be allowed', async () =>
      (await allowed(consumerId)) ? true : undefined,
    );
    expect(await stateInKubernetes(requestId)).toBe('APPROVED');
  });

  it('withdraw: the consumer withdraws, the owner can no longer approve, nothing is granted', async () => {
    const consumerId = randomUUID();
    const consumer = await token(consumerId);
    const { requestId, etag } = await ask(consumer);
    const stale = await decide(provider, requestId, '"0"', 'APPROVED');
    expect(stale.status).toBe(412);
    const withdrawn = await decide(consumer, requestId, etag, 'WITHDRAWN');
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body.results[0]).toMatchObject({ status: 'WITHDRAWN', policyIds: [] });
    const late = await decide(provider, requestId, withdrawn.headers.get('etag') ?? '', 'APPROVED');
    expect(late.status).toBe(409);
    expect(await stateInKubernetes(requestId)).toBe('WITHDRAWN');
    expect(await allowed(consumerId)).toBe(false);
  });

  it('only the owner decides, with If-Match; a conflicting approval is 409 and changes nothing; reject', async () => {
    const consumerId = randomUUID();
    const consumer = await token(consumerId);
    const { requestId, etag } = await ask(consumer);

    expect((await decide(provider, requestId, undefined, 'APPROVED')).status).toBe(428);
    const stranger = await token(randomUUID());
    expect((await decide(stranger, requestId, etag, 'APPROVED')).status).toBe(403);
    expect((await decide(consumer, requestId, etag, 'APPROVED')).status).toBe(403);

    await grantDirectly(consumerId);
    const conflicting = await decide(provider, requestId, etag, 'APPROVED');
    expect(conflicting.status).toBe(409);
    expect(await stateInKubernetes(requestId)).toBe('PENDING');

    const rejected = await decide(provider, requestId, etag, 'REJECTED');
    expect(rejected.status).toBe(200);
    expect(rejected.body.results[0]).toMatchObject({ requestId, status: 'REJECTED', policyIds: [] });
    expect(await stateInKubernetes(requestId)).toBe('REJECTED');
  });
});
