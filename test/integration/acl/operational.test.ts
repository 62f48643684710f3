import { randomUUID } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAclApi, type RunningAclApi } from '../../../src/acl/acl-server.js';
import { compareRoutes } from '../../../src/http/openapi/route-contract.js';
import { AclHarness, individual, type Caller } from './support/acl-harness.js';

// The contract (served routes == documented routes, operation ids, security, statuses), the operational
// endpoints, and the one dependency outage there is: Kubernetes unreachable → 503 naming kubernetes (the ACL
// API uses no SpiceDB).

const harness = new AclHarness();
let owner: Caller;
let itemId: string;

beforeAll(async () => {
  await harness.start('acl-operational');
  const orgId = randomUUID();
  owner = await harness.user({ org: orgId });
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
});

afterAll(() => harness.stop());

type Operation = {
  operationId?: string;
  servers?: { url: string }[];
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
};

function allOperations(): [string, string, Operation][] {
  return Object.entries(harness.api.document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(([method, op]): [string, string, Operation] => [
      method,
      path,
      op,
    ]),
  );
}

/** The API's operations, under the base path; the operational ones name the root as their server. */
function operations(): [string, string, Operation][] {
  return allOperations().filter(([, , op]) => op.servers === undefined);
}

describe('contract', () => {
  it('the app serves exactly the documented routes, the operational ones included', () => {
    const comparison = compareRoutes(harness.api.app, harness.api.document);
    expect(comparison.undocumented).toEqual([]);
    expect(comparison.unserved).toEqual([]);
    expect(comparison.served.map((route) => `${route.method} ${route.path}`).sort()).toEqual([
      'DELETE /v2/agents/:agentId',
      'DELETE /v2/delegations/:id',
      'DELETE /v2/policy',
      'GET /docs',
      'GET /healthz/live',
      'GET /healthz/ready',
      'GET /metrics',
      'GET /v2/access-requests/:id',
      'GET /v2/access-requests/consumer',
      'GET /v2/access-requests/provider',
      'GET /v2/audit',
      'GET /v2/audit/export',
      'GET /v2/audit/verify',
      'GET /v2/delegations',
      'GET /v2/delegations/:id',
      'GET /v2/explain',
      'GET /v2/organisations/:organisationId/groups/:groupId/members',
      'GET /v2/organisations/:organisationId/members',
      'GET /v2/policy/consumer',
      'GET /v2/policy/organisation',
      'GET /v2/policy/platform',
      'GET /v2/policy/provider',
      'PATCH /v2/access-requests/:id',
      'POST /v2/access-requests',
      'POST /v2/delegations',
      'POST /v2/events',
      'POST /v2/policy',
      'POST /v2/verify',
      'PUT /v2/agents/:agentId',
      'PUT /v2/organisations/:organisationId/groups/:groupId/members',
      'PUT /v2/organisations/:organisationId/members',
    ]);
  });

  it('the operational routes are documented at the service root, public, each with an operationId', () => {
    const operational = allOperations().filter(([, , op]) => op.servers !== undefined);
    expect(
      operational.map(([method, path, op]) => [method, path, op.operationId, op.servers, op.security]),
    ).toEqual([
      ['get', '/healthz/live', 'getLiveness', [{ url: '/' }], []],
      ['get', '/healthz/ready', 'getReadiness', [{ url: '/' }], []],
      ['get', '/metrics', 'getMetrics', [{ url: '/' }], []],
      ['get', '/docs', 'getOpenApiDocument', [{ url: '/' }], []],
    ]);
  });

  it('every operation has a unique operationId, both security schemes, JSON bodies and the error statuses', () => {
    const ids = allOperations().map(([, , op]) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const ops = operations();
    for (const [method, path, op] of ops) {
      const name = `${method} ${path}`;
      const schemes = new Set(op.security?.map((requirement) => Object.keys(requirement)[0]));
      expect([...schemes].sort(), name).toEqual(['basicAuth', 'bearerAuth']);
      expect(Object.keys(op.responses), name).toEqual(expect.arrayContaining(['400', '401', '503']));
      for (const response of Object.values(op.responses)) {
        expect(Object.keys(response.content ?? { 'application/json': {} }), name).toEqual([
          'application/json',
        ]);
      }
      const bodyTypes =
        op.operationId === 'postMemberEvents'
          ? ['application/cloudevents+json', 'application/cloudevents-batch+json']
          : ['application/json'];
      if (op.requestBody) expect(Object.keys(op.requestBody.content), name).toEqual(bodyTypes);
    }
    const roles = Object.fromEntries(ops.map(([, , op]) => [op.operationId, op.security?.[0]]));
    expect(roles.listOrganisationPolicies).toEqual({ bearerAuth: ['org_admin'] });
    expect(roles.listPlatformPolicies).toEqual({ bearerAuth: ['cos_admin'] });
    expect(roles.createPolicy).toEqual({ bearerAuth: [] });
    const anyOf = (operationId: string) =>
      operations().find(([, , op]) => op.operationId === operationId)?.[2];
    expect(anyOf('postMemberEvents')?.security).toEqual([
      { bearerAuth: ['event_producer'] },
      { bearerAuth: ['platform_event_producer'] },
      { bearerAuth: ['cos_admin'] },
      { basicAuth: ['event_producer'] },
      { basicAuth: ['platform_event_producer'] },
      { basicAuth: ['cos_admin'] },
    ]);
    expect(anyOf('listGroupMembers')?.security?.[1]).toEqual({ bearerAuth: ['cos_admin'] });
  });

  it('documents the statuses of the spec table per operation', () => {
    const statuses = Object.fromEntries(
      operations().map(([, , op]) => [op.operationId, Object.keys(op.responses)]),
    );
    expect(statuses.createPolicy).toEqual(expect.arrayContaining(['201', '403', '404', '409', '413', '415']));
    expect(statuses.deletePolicy).toEqual(expect.arrayContaining(['200', '403', '404']));
    expect(statuses.verifyPolicy).toEqual(expect.arrayContaining(['200', '403']));
    expect(statuses.listOrganisationPolicies).toEqual(expect.arrayContaining(['200', '403']));
  });

  it('GET /docs serves the document, with the base path as server', async () => {
    const answer = await harness.request<{ openapi: string; servers: unknown }>('GET', '/docs');
    expect(answer.status).toBe(200);
    expect(answer.body.openapi).toBe('3.1.0');
    expect(answer.body.servers).toEqual([{ url: '/v2' }]);
    expect(answer.body).toEqual(JSON.parse(JSON.stringify(harness.api.document)));
  });

  it('an unknown path is a 404 envelope; another method on a known path a 405 naming the allowed ones', async () => {
    const missing = await harness.request('GET', '/policy/nothing', { caller: owner });
    expect(missing.status).toBe(404);
    expect(missing.body.type).toBe('urn:dx:acl:NotFound');
    const wrongMethod = await harness.request('PUT', '/policy', { caller: owner });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST, DELETE');
  });
});

describe('operational endpoints', () => {
  it('live and ready, naming the checks', async () => {
    expect((await harness.request('GET', '/healthz/live')).status).toBe(200);
    const ready = await harness.request<{ results: { name: string; status: string }[] }>(
      'GET',
      '/healthz/ready',
    );
    expect(ready.status).toBe(200);
    expect(ready.body.results.map((check) => [check.name, check.status])).toEqual([
      ['kubernetes', 'ok'],
      ['kubernetes-informers', 'ok'],
      ['postgres', 'ok'],
    ]);
  });

  it('metrics: HTTP requests by route and status, and grants by state', async () => {
    const created = await harness.request('POST', '/policy', {
      caller: owner,
      body: { request: [individual(itemId, randomUUID())] },
    });
    expect(created.status).toBe(201);
    const metrics = (await harness.request<string>('GET', '/metrics')).body;
    expect(metrics).toMatch(
      /policygrant_http_requests_total\{method="POST",route="\/v2\/policy",code="201"\} [1-9]/,
    );
    expect(metrics).toContain('policygrant_http_request_duration_seconds_bucket');
    expect(metrics).toMatch(/policygrant_acl_policy_grants\{state="ACTIVE"\} [1-9]/);
    expect(metrics).toMatch(/policygrant_acl_policy_grants\{state="DELETED"\} \d+/);
    expect(metrics).toMatch(/policygrant_acl_policy_grants\{state="EXPIRED"\} \d+/);
  });
});

/** A TCP relay to the apiserver that the test can cut. */
async function relayTo(target: URL): Promise<{ port: number; cut: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}

describe('Kubernetes unreachable', () => {
  let api: RunningAclApi;
  let cut: () => Promise<void>;

  beforeAll(async () => {
    const relay = await relayTo(new URL(harness.kubeConfig.getCurrentCluster()?.server as string));
    cut = relay.cut;
    api = await startAclApi(await harness.config({ kubeTimeoutMs: 1_000 }), {
      kubeConfig: harness.kubeConfigVia(relay.port),
    });
  });

  afterAll(() => api?.stop());

  async function call(method: string, path: string, body?: unknown) {
    const response = await fetch(`${path.startsWith('/healthz') ? api.rootUrl : api.url}${path}`, {
      method,
      headers: { authorization: owner.authorization, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as { type: string; detail: string } };
  }

  it('creates and deletes answer 503 naming kubernetes; readiness names it too', async () => {
    const granted = await harness.request<{ results: { policyId: string }[] }>('POST', '/policy', {
      caller: owner,
      body: { request: [individual(itemId, randomUUID())] },
    });
    expect(granted.status).toBe(201);
    const policyId = granted.body.results[0]?.policyId as string;
    await expect.poll(() => api.cache.itemsWithId(itemId).length).toBe(1);
    await expect.poll(() => api.cache.grantByUid(policyId) !== undefined).toBe(true);
    const before = await call('GET', '/policy/provider');
    expect(before.status).toBe(200);
    await cut();
    const created = await call('POST', '/policy', { request: [individual(itemId, randomUUID())] });
    expect(created.status).toBe(503);
    expect(created.body).toMatchObject({
      type: 'urn:dx:acl:DependencyUnavailable',
      detail: 'kubernetes is unavailable',
    });
    const deleted = await call('DELETE', `/policy?id=${policyId}`);
    expect(deleted.status).toBe(503);
    expect(deleted.body.detail).toBe('kubernetes is unavailable');
    const ready = await call('GET', '/healthz/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.detail).toMatch(/not ready: kubernetes \((failed|timed out)\)/);
  });

  it('an API that never reached Kubernetes: not ready, and every route 503 naming kubernetes', async () => {
    const relay = await relayTo(new URL(harness.kubeConfig.getCurrentCluster()?.server as string));
    const port = relay.port;
    await relay.cut();
    const dead = await startAclApi(await harness.config({ startupSyncTimeoutMs: 200, kubeTimeoutMs: 500 }), {
      kubeConfig: harness.kubeConfigVia(port),
    });
    try {
      for (const [method, path, body] of [
        ['GET', '/policy/consumer', undefined],
        ['POST', '/policy', { request: [individual(itemId, randomUUID())] }],
        ['POST', '/verify', { user: { id: owner.id }, item: { itemId } }],
      ] as const) {
        const response = await fetch(`${dead.url}${path}`, {
          method,
          headers: { authorization: owner.authorization, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        expect(response.status, path).toBe(503);
        expect(((await response.json()) as { detail: string }).detail).toMatch(/^kubernetes is unavailable/);
      }
      const ready = await fetch(`${dead.rootUrl}/healthz/ready`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { detail: string }).detail).toContain('kubernetes-informers (failed)');
    } finally {
      await dead.stop();
    }
  });
});
