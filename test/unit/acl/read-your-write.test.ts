import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  AccessRequests,
  type AccessRequestsOptions,
} from '../../../src/acl/access-requests/access-requests.js';
import { Delegations, type DelegationsOptions } from '../../../src/acl/delegations/delegations.js';
import type { KubeCall, KubeClient } from '../../../src/kube/kube-client.js';
import type { CatalogItem } from '../../../src/api/v1alpha1/index.js';
import type { Principal } from '../../../src/auth/principal.js';
import { DEFAULT_USER_QUOTAS } from '../../../src/acl/user-quotas.js';

// A write waits for the informer's cache to show it, up to ACL_READ_YOUR_WRITE_TIMEOUT, then answers anyway.
// Here the cache never shows it, so each write takes the configured timeout: a short one is honoured.

const TIMEOUT_MS = 100;
/** Far below the 5 s default: a write that waits the default fails this. */
const ANSWERED_WITHIN_MS = 2_000;

const user: Principal = { kind: 'user', id: randomUUID(), roles: new Set() };

/**
 * The apiserver: stores every write and answers the object as stored, with a uid and a resourceVersion; a write
 * to the status subresource changes only the stored object's status.
 */
let stored: object = {};
const apiserver = {
  call: async ({ path, body }: KubeCall) => {
    const written = body as { status?: unknown };
    stored = path.endsWith('/status')
      ? { ...stored, status: written.status }
      : { ...written, metadata: { name: 'x', uid: randomUUID(), resourceVersion: '1' } };
    return stored;
  },
} as unknown as KubeClient;

async function elapsedMs(write: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await write();
  return performance.now() - started;
}

describe('read-your-write waits honour the configured timeout', () => {
  it('an access request is answered after the configured timeout when the cache lags', async () => {
    const item = {
      spec: { itemId: randomUUID(), itemType: 'resource', ownerId: randomUUID(), accessTypes: ['api'] },
    } as CatalogItem;
    const requests = new AccessRequests({
      kube: apiserver,
      cache: { itemsWithId: () => [item], accessRequestsOf: () => [], accessRequestByUid: () => undefined },
      verifier: { verify: () => ({ all: [] }) },
      quotas: DEFAULT_USER_QUOTAS,
      namespace: 'acl',
      now: () => new Date(),
      readYourWriteTimeoutMs: TIMEOUT_MS,
    } as unknown as AccessRequestsOptions);
    const body = {
      itemId: item.spec.itemId,
      itemType: 'resource',
      access: [{ accessType: 'api' }],
      expiryTime: '2099-01-01T00:00:00Z',
    };
    const took = await elapsedMs(() => requests.create(user, body));
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(took).toBeLessThan(ANSWERED_WITHIN_MS);
  });

  it('a delegation is answered after the configured timeout when the cache lags', async () => {
    const itemId = randomUUID();
    const delegations = new Delegations({
      kube: apiserver,
      cache: {
        delegationByUid: () => undefined,
        delegationsOf: () => [],
        itemsWithId: () => [{ spec: { itemId } }],
      },
      agents: { claim: async () => undefined },
      quotas: DEFAULT_USER_QUOTAS,
      namespace: 'acl',
      now: () => new Date(),
      readYourWriteTimeoutMs: TIMEOUT_MS,
    } as unknown as DelegationsOptions);
    const body = {
      agentId: randomUUID(),
      itemId,
      relation: 'viewer',
      expiryTime: '2099-01-01T00:00:00Z',
    };
    const took = await elapsedMs(() => delegations.create(user, body as never));
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(took).toBeLessThan(ANSWERED_WITHIN_MS);
  });
});
