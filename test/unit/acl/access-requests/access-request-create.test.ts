import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  AccessRequests,
  type AccessRequestCache,
  type AccessRequestsOptions,
} from '../../../../src/acl/access-requests/access-requests.js';
import type { KubeClient, KubeCall } from '../../../../src/kube/kube-client.js';
import type { AccessRequest, CatalogItem } from '../../../../src/api/v1alpha1/index.js';
import type { Principal } from '../../../../src/auth/principal.js';
import { DEFAULT_USER_QUOTAS } from '../../../../src/acl/user-quotas.js';
import { KubeApiError } from '../../../../src/kube/index.js';

// A new request is marked PENDING by the ACL API, and by the controller too when it sees a request without a
// state first: the ACL API's conditioned status write then meets a 409, which is no failure when the request is
// PENDING already (it was a 503 naming kubernetes).

const consumer: Principal = { kind: 'user', id: randomUUID(), roles: new Set() };
const item = {
  spec: { itemId: randomUUID(), itemType: 'resource', ownerId: randomUUID(), accessTypes: ['api'] },
} as CatalogItem;
const body = {
  itemId: item.spec.itemId,
  itemType: 'resource',
  access: [{ accessType: 'api' }],
  expiryTime: '2099-01-01T00:00:00Z',
};

const created: AccessRequest = {
  apiVersion: 'acl.policygrant.dev/v1alpha1',
  kind: 'AccessRequest',
  metadata: { name: 'request-x', namespace: 'acl', uid: randomUUID(), resourceVersion: '1' },
  spec: { consumerId: consumer.id, ...body },
} as AccessRequest;
const conflict = new KubeApiError(409, 'Conflict', 'the object has been modified');

/** The apiserver: answers the create, refuses the status write with 409, and reads what the controller wrote. */
function apiserverAfterTheController(stateTheControllerWrote: string | undefined): KubeClient {
  const current = {
    ...created,
    metadata: { ...created.metadata, resourceVersion: '2' },
    ...(stateTheControllerWrote ? { status: { state: stateTheControllerWrote } } : {}),
  };
  const answers: Record<string, () => unknown> = {
    POST: () => created,
    PUT: () => {
      throw conflict;
    },
    GET: () => current,
  };
  return { call: async (request: KubeCall) => answers[request.method]?.() } as unknown as KubeClient;
}

function accessRequests(kube: KubeClient): AccessRequests {
  const cache = {
    itemsWithId: () => [item],
    accessRequestsOf: () => [],
    accessRequestByUid: () => ({ metadata: { resourceVersion: '2' } }),
  } as unknown as AccessRequestCache;
  const options = {
    kube,
    cache,
    verifier: { verify: () => ({ all: [] }) },
    quotas: DEFAULT_USER_QUOTAS,
    namespace: 'acl',
    now: () => new Date(),
    readYourWriteTimeoutMs: 1_000,
  } as unknown as AccessRequestsOptions;
  return new AccessRequests(options);
}

describe('creating an access request while the controller marks it', () => {
  it('answers the request PENDING when the controller wrote PENDING first', async () => {
    const { row, etag } = await accessRequests(apiserverAfterTheController('PENDING')).create(consumer, body);
    expect(row).toMatchObject({ requestId: created.metadata.uid, status: 'PENDING' });
    expect(etag).toBe('"2"');
  });

  it('still fails when the request changed to anything but PENDING', async () => {
    await expect(
      accessRequests(apiserverAfterTheController('WITHDRAWN')).create(consumer, body),
    ).rejects.toBe(conflict);
  });
});
