import type { RequestHandler } from 'express';
import { z } from 'zod';
import { createHttpApp } from '../../../../src/http/app.js';
import type { Drain } from '../../../../src/http/drain.js';
import { successEnvelope, successEnvelopeSchema } from '../../../../src/http/envelope.js';
import { dependencyUnavailable } from '../../../../src/http/errors.js';
import type { ApiAuthentication } from '../../../../src/http/openapi/route-definition.js';
import { RouteTable } from '../../../../src/http/openapi/route-table.js';
import { problemResponse } from '../../../../src/http/openapi/route-responses.js';
import { documentedOperationalRoutes } from '../../../../src/http/operational-routes.js';
import type { ReadinessCheck } from '../../../../src/http/readiness.js';
import { createUrnScheme } from '../../../../src/http/urn.js';
import { createMetricsRegistry } from '../../../../src/observability/metrics.js';
import type { Logger } from '../../../../src/observability/logger.js';
import { serve } from './serve.js';

export const urn = createUrnScheme('acl');

/** Trusts an `x-test-user: <id> [role...]` header; stands in for authenticate() in HTTP plumbing tests. */
export const testAuthentication: ApiAuthentication = {
  middleware: ((req, _res, next) => {
    const [id, ...roles] = (req.get('x-test-user') ?? '').split(' ');
    if (id) req.principal = { kind: 'user', id, roles: new Set(roles) };
    next();
  }) satisfies RequestHandler,
  schemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
};

const grantItem = z.object({ userId: z.uuid(), itemId: z.string().min(1) });

/** A small API in the shape of the ACL service, declared once through the registry. */
export function sampleTable(options: { validateResponses?: boolean } = {}): RouteTable {
  return new RouteTable({ authentication: testAuthentication, bodyLimit: 1024, ...options })
    .add({
      method: 'post',
      path: '/policy',
      operationId: 'createPolicy',
      summary: 'Create grants',
      access: 'authenticated',
      request: {
        body: z.object({ request: z.array(grantItem).min(1) }),
        headers: z.object({ 'idempotency-key': z.string().max(64).optional() }),
      },
      responses: {
        201: {
          description: 'Created',
          schema: successEnvelopeSchema(urn, { results: z.object({ policyId: z.string() }), detail: true }),
        },
        409: problemResponse('An active grant exists'),
      },
      handler: ({ body, principal }) => ({
        status: 201,
        body: successEnvelope(urn, {
          title: 'created',
          detail: `${body.request.length} created by ${principal.id}`,
          results: body.request.map((_, index) => ({ policyId: `p${index}` })),
        }),
      }),
    })
    .add({
      method: 'get',
      path: '/policy/platform',
      operationId: 'listPlatformPolicies',
      summary: 'All grants',
      access: { role: 'cos_admin' },
      request: { query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(50) }) },
      responses: { 200: { description: 'Listing', schema: successEnvelopeSchema(urn, { paginated: true }) } },
      handler: ({ query }) => ({
        status: 200,
        body: successEnvelope(urn, {
          title: 'ok',
          paginationInfo: { offset: 0, limit: query.limit, totalHits: 0 },
        }),
      }),
    })
    .add({
      method: 'get',
      path: '/things/{id}',
      operationId: 'getThing',
      summary: 'One thing',
      access: 'public',
      request: { params: z.object({ id: z.string().regex(/^t-\d+$/) }) },
      responses: { 200: { description: 'The thing', schema: z.object({ id: z.string() }) } },
      handler: ({ params }) => ({ status: 200, body: { id: params.id } }),
    })
    .add({
      method: 'delete',
      path: '/things/{id}',
      operationId: 'deleteThing',
      summary: 'Delete a thing',
      access: 'public',
      request: { params: z.object({ id: z.string() }) },
      responses: { 204: { description: 'Deleted' } },
      handler: ({ params }) => ({ status: params.id === 'wrong-status' ? 200 : 204 }),
    })
    .add({
      method: 'get',
      path: '/failures/{kind}',
      operationId: 'fail',
      summary: 'Fails on purpose',
      access: 'public',
      request: { params: z.object({ kind: z.enum(['bug', 'zod', 'kubernetes']) }) },
      responses: { 503: problemResponse('Kubernetes is unavailable') },
      handler: ({ params }) => {
        if (params.kind === 'kubernetes')
          throw dependencyUnavailable('kubernetes', new Error('connect ECONNREFUSED'));
        if (params.kind === 'zod') z.object({ count: z.number() }).parse({ count: 'many' });
        throw new Error('internal detail that must not leak');
      },
    });
}

export interface SampleAppOptions {
  logger: Logger;
  readinessChecks?: ReadinessCheck[];
  validateResponses?: boolean;
  drain?: Drain;
}

export function sampleApp(options: SampleAppOptions) {
  const registry = sampleTable({ validateResponses: options.validateResponses ?? true });
  const metricsRegistry = createMetricsRegistry();
  const document = registry.document(
    { info: { title: 'sample', version: '1' }, servers: [{ url: '/v2' }] },
    documentedOperationalRoutes(urn),
  );
  const app = createHttpApp({
    urn,
    logger: options.logger,
    metricsRegistry,
    readinessChecks: options.readinessChecks ?? [],
    readinessTimeoutMs: 200,
    openApiDocument: document,
    routers: [{ path: '/v2', router: registry.router() }],
    ...(options.drain ? { drain: options.drain } : {}),
  });
  return { app, registry, metricsRegistry, document };
}

/** `routes` at the root of an app that serves nothing else, until the end of the test; returns its base URL. */
export function serveRoutes(routes: RouteTable, logger: Logger): Promise<string> {
  const app = createHttpApp({
    urn,
    logger,
    metricsRegistry: createMetricsRegistry(),
    readinessChecks: [],
    openApiDocument: routes.document({ info: { title: 't', version: '1' } }),
    routers: [{ path: '/', router: routes.router() }],
  });
  return serve(app);
}
