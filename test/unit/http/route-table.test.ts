import express from 'express';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compareRoutes, listDocumentedRoutes } from '../../../src/http/openapi/route-contract.js';
import { RouteTable } from '../../../src/http/openapi/route-table.js';
import { documentedOperationalRoutes } from '../../../src/http/operational-routes.js';
import { createUrnScheme } from '../../../src/http/urn.js';
import { sampleApp, sampleTable } from './support/sample-api.js';
import { capturedLogger } from './support/serve.js';

const info = { title: 'sample', version: '1' };

type Operation = {
  operationId: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
};

function operation(document: ReturnType<RouteTable['document']>, path: string, method: string): Operation {
  return (document.paths?.[path] as Record<string, Operation>)[method] as Operation;
}

describe('OpenAPI document', () => {
  const table = sampleTable();
  const document = table.document({ info, servers: [{ url: '/v2' }] });

  it('is OpenAPI 3.1 with the servers it was given', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: '/v2' }]);
  });

  it('contains every declared route with its operationId', () => {
    const documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item as Record<string, Operation>).map(
        ([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`,
      ),
    );
    expect(documented.sort()).toEqual(
      table
        .routes()
        .map((route) => `${route.method} ${route.path} ${route.operationId}`)
        .sort(),
    );
  });

  it('describes authentication, with the required role in the security requirement', () => {
    expect(document.components?.securitySchemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    });
    expect(operation(document, '/policy', 'post').security).toEqual([{ bearerAuth: [] }]);
    expect(operation(document, '/policy/platform', 'get').security).toEqual([{ bearerAuth: ['cos_admin'] }]);
    expect(operation(document, '/things/{id}', 'get').security).toEqual([]);
  });

  it('describes parameters, the body and its media type', () => {
    const create = operation(document, '/policy', 'post');
    expect(Object.keys(create.requestBody?.content ?? {})).toEqual(['application/json']);
    expect(create.parameters).toEqual([
      expect.objectContaining({ name: 'idempotency-key', in: 'header', required: false }),
    ]);
    expect(operation(document, '/things/{id}', 'get').parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    ]);
    expect(operation(document, '/policy/platform', 'get').parameters).toEqual([
      expect.objectContaining({ name: 'limit', in: 'query' }),
    ]);
  });

  it('adds the standard errors a declaration makes possible', () => {
    expect(Object.keys(operation(document, '/policy', 'post').responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '409',
      '413',
      '415',
      '429',
    ]);
    expect(Object.keys(operation(document, '/policy/platform', 'get').responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '429',
    ]);
    expect(Object.keys(operation(document, '/things/{id}', 'delete').responses).sort()).toEqual([
      '204',
      '400',
    ]);
    expect(Object.keys(operation(document, '/policy', 'post').responses['429']?.headers ?? {})).toEqual([
      'retry-after',
      'ratelimit',
      'ratelimit-policy',
    ]);
    expect(operation(document, '/policy', 'post').responses['409']?.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/Problem' } },
    });
  });
});

describe('declaration checks', () => {
  const route = {
    method: 'get' as const,
    path: '/items/{id}',
    operationId: 'getItem',
    summary: 'item',
    access: 'public' as const,
    request: { params: z.object({ id: z.string() }) },
    responses: { 200: { description: 'ok' } },
    handler: () => ({ status: 200 }),
  };

  it('rejects a second route with the same operationId or the same method and path', () => {
    const table = new RouteTable().add(route);
    expect(() => table.add({ ...route, path: '/other/{id}' })).toThrow(/operationId getItem/);
    expect(() => table.add({ ...route, operationId: 'again' })).toThrow(/already declared/);
  });

  it('rejects path parameters without a matching params schema', () => {
    expect(() => new RouteTable().add({ ...route, request: {} })).toThrow(/path parameters/);
  });

  it('rejects header names that are not lower case', () => {
    expect(() =>
      new RouteTable().add({
        ...route,
        request: { ...route.request, headers: z.object({ 'Idempotency-Key': z.string() }) },
      }),
    ).toThrow(/lower case/);
  });

  it('rejects a protected route when no authentication is configured', () => {
    expect(() => new RouteTable().add({ ...route, access: 'authenticated' })).toThrow(/authentication/);
  });
});

describe('served routes versus the document', () => {
  it('finds no difference for an app built from the table', () => {
    const { app, document } = sampleApp({ logger: capturedLogger().logger });
    const comparison = compareRoutes(app, document);
    expect(comparison.undocumented).toEqual([]);
    expect(comparison.unserved).toEqual([]);
    expect(comparison.served).toContainEqual({ method: 'GET', path: '/v2/things/:id' });
    expect(comparison.served).toContainEqual({ method: 'GET', path: '/healthz/ready' });
    expect(comparison.served).toHaveLength(9);
  });

  it('reports a route served outside the table as undocumented', () => {
    const { document } = sampleApp({ logger: capturedLogger().logger });
    const app = express();
    const router = sampleTable().router();
    router.get('/debug/state', (_req, res) => void res.json({}));
    app.use('/v2', router);
    app.post('/admin/reset', (_req, res) => void res.end());
    expect(compareRoutes(app, document).undocumented).toEqual([
      { method: 'GET', path: '/v2/debug/state' },
      { method: 'POST', path: '/admin/reset' },
    ]);
  });

  it('reports a documented route that is not served', () => {
    const { document } = sampleApp({ logger: capturedLogger().logger });
    const app = express();
    app.use(
      '/v2',
      new RouteTable()
        .add({
          method: 'get',
          path: '/things/{id}',
          operationId: 'getThing',
          summary: 'One thing',
          access: 'public',
          request: { params: z.object({ id: z.string() }) },
          responses: { 200: { description: 'ok' } },
          handler: () => ({ status: 200 }),
        })
        .router(),
    );
    expect(compareRoutes(app, document).unserved).toContainEqual({ method: 'POST', path: '/v2/policy' });
  });

  it("reads an operation's own server before the document's", () => {
    const document = sampleTable().document(
      { info, servers: [{ url: '/v2' }] },
      documentedOperationalRoutes(createUrnScheme('acl')),
    );
    const routes = listDocumentedRoutes(document);
    expect(routes).toContainEqual({ method: 'GET', path: '/metrics' });
    expect(routes).toContainEqual({ method: 'DELETE', path: '/v2/things/:id' });
  });

  it('prefixes documented paths with the server path', () => {
    const document = sampleTable().document({ info, servers: [{ url: 'https://gateway.example/acl' }] });
    expect(listDocumentedRoutes(document)).toContainEqual({ method: 'DELETE', path: '/acl/things/:id' });
  });
});
