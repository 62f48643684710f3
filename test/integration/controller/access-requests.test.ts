import { randomUUID } from 'node:crypto';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  ACCESS_REQUEST_KIND,
  ACCESS_REQUEST_PLURAL,
  API_GROUP,
  API_VERSION,
  GROUP_VERSION,
  type AccessRequest,
  type AccessRequestStatus,
} from '../../../src/api/v1alpha1/index.js';
import { EXPIRED_BY } from '../../../src/controller/access-requests/access-request-reconciler.js';
import { until } from '../../support/until.js';
import { testKubeConfig } from '../support/cluster.js';
import { useControllerFixture } from './support/harness.js';

// The controller's part of the access-request lifecycle, with a pending TTL of 4 s: a request applied without
// a state is marked PENDING, one pending past the TTL becomes EXPIRED, a decided one stays as decided; each
// decision has one Event on the request.

const world = useControllerFixture('access-requests', { ACCESS_REQUEST_PENDING_TTL: '4s' });
const api = testKubeConfig().makeApiClient(CustomObjectsApi);
const where = () => ({
  group: API_GROUP,
  version: API_VERSION,
  namespace: world.aclNamespace,
  plural: ACCESS_REQUEST_PLURAL,
});

async function apply(): Promise<AccessRequest> {
  return (await api.createNamespacedCustomObject({
    ...where(),
    body: {
      apiVersion: GROUP_VERSION,
      kind: ACCESS_REQUEST_KIND,
      metadata: { generateName: 'request-' },
      spec: {
        consumerId: randomUUID(),
        itemId: `urn:dx:item:${randomUUID()}`,
        itemType: 'DATABANK',
        access: [{ accessType: 'api' }],
        expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
      },
    },
  })) as AccessRequest;
}

async function current(name: string): Promise<AccessRequest> {
  return (await api.getNamespacedCustomObject({ ...where(), name })) as AccessRequest;
}

/** As the ACL API decides: a status write on the version read. */
async function decide(name: string, status: AccessRequestStatus): Promise<void> {
  const request = await current(name);
  await api.replaceNamespacedCustomObjectStatus({ ...where(), name, body: { ...request, status } });
}

async function untilState(name: string, state: string): Promise<AccessRequest> {
  let seen: AccessRequest | undefined;
  await until(async () => {
    seen = await current(name);
    return seen.status?.state === state;
  }, `${name} ${state}`);
  return seen as AccessRequest;
}

async function eventsOn(name: string): Promise<string[]> {
  return (await world.resources.listEvents(world.aclNamespace))
    .filter((event) => event.regarding?.name === name)
    .map((event) => event.reason ?? '');
}

describe('an AccessRequest', () => {
  it('applied without a state is PENDING, then EXPIRED past the TTL, with an Expired Event', async () => {
    const { metadata } = await apply();
    const name = metadata.name ?? '';
    await untilState(name, 'PENDING');
    const expired = await untilState(name, 'EXPIRED');
    expect(expired.status).toMatchObject({ decidedBy: EXPIRED_BY });
    expect(Date.parse(expired.status?.decidedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(String(metadata.creationTimestamp)) + 4_000,
    );
    await until(async () => (await eventsOn(name)).includes('Expired'), `Expired Event on ${name}`);
  });

  it('decided before the TTL stays decided, and has one Event for its decision', async () => {
    const decided = (await apply()).metadata.name ?? '';
    const pending = (await apply()).metadata.name ?? '';
    await untilState(decided, 'PENDING');
    await decide(decided, {
      state: 'REJECTED',
      decidedBy: randomUUID(),
      decidedAt: new Date().toISOString(),
      reason: 'not for this project',
    });
    // The other request, applied after this one, expiring shows the controller past this one's due time.
    await untilState(pending, 'EXPIRED');
    expect((await current(decided)).status?.state).toBe('REJECTED');
    await until(async () => (await eventsOn(decided)).includes('Rejected'), `Rejected Event on ${decided}`);
    expect(await eventsOn(decided)).toEqual(['Rejected']);
  });
});
