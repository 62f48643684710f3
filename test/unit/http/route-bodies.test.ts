import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApiAuthentication } from '../../../src/http/openapi/route-definition.js';
import { RouteTable } from '../../../src/http/openapi/route-table.js';
import { serveRoutes, testAuthentication } from './support/sample-api.js';
import { capturedLogger } from './support/serve.js';

// Routes whose body comes in one of several media types, each with its own schema, and routes open to any
// one of several roles: the document describes both, the router enforces both.

const ONE = 'application/thing+json';
const MANY = 'application/things+json';
const thing = z.object({ name: z.string().min(1) });

const authentication: ApiAuthentication = {
  ...testAuthentication,
  schemes: { ...testAuthentication.schemes, basicAuth: { type: 'http', scheme: 'basic' } },
};

function registry(): RouteTable {
  return new RouteTable({ authentication }).add({
    method: 'post',
    path: '/things',
    operationId: 'postThings',
    summary: 'One thing or several',
    access: { anyRole: ['producer', 'admin'] },
    request: { bodies: { [ONE]: thing, [MANY]: z.array(thing) } },
    responses: { 200: { description: 'Names', schema: z.object({ names: z.array(z.string()) }) } },
    handler: ({ body }) => ({
      status: 200,
      body: { names: (Array.isArray(body) ? body : [body]).map((item) => item.name) },
    }),
  });
}

async function start() {
  const base = await serveRoutes(registry(), capturedLogger().logger);
  return (contentType: string | undefined, body: string | undefined, user = 'u1 producer') =>
    fetch(`${base}/things`, {
      method: 'POST',
      headers: { 'x-test-user': user, ...(contentType ? { 'content-type': contentType } : {}) },
      ...(body === undefined ? {} : { body }),
    }).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
    }));
}

describe('bodies by media type', () => {
  it('documents one schema per media type and a 415 naming them', () => {
    const operation = registry().document({ info: { title: 't', version: '1' } }).paths?.['/things']?.post;
    expect(
      Object.keys(
        operation?.requestBody && 'content' in operation.requestBody ? operation.requestBody.content : {},
      ),
    ).toEqual([ONE, MANY]);
    expect(operation?.responses?.['415']).toMatchObject({
      description: `Request body is not ${ONE} or ${MANY}`,
    });
  });

  it('validates each media type with its own schema, naming the field', async () => {
    const post = await start();
    expect(await post(ONE, '{"name":"a"}')).toEqual({ status: 200, body: { names: ['a'] } });
    expect(await post(`${MANY}; charset=utf-8`, '[{"name":"a"},{"name":"b"}]')).toEqual({
      status: 200,
      body: { names: ['a', 'b'] },
    });
    const invalid = await post(MANY, '[{"name":"a"},{"name":""}]');
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail).toMatch(/^\[1\]\.name: /);
    expect((await post(ONE, '[{"name":"a"}]')).status).toBe(400);
  });

  it('another media type is a 415; no body at all a 400', async () => {
    const post = await start();
    for (const contentType of ['application/json', 'text/plain', 'application/other+json']) {
      const answer = await post(contentType, '{"name":"a"}');
      expect(answer.status, contentType).toBe(415);
      expect(answer.body.detail).toBe(`request body must be ${ONE} or ${MANY}`);
    }
    const empty = await post(undefined, undefined);
    expect(empty.status).toBe(400);
    expect(empty.body.detail).toBe(`body: required, as ${ONE} or ${MANY}`);
  });

  it('refuses a declaration with both body and bodies', () => {
    expect(() =>
      new RouteTable({ authentication }).add({
        method: 'post',
        path: '/both',
        operationId: 'both',
        summary: 'both',
        access: 'authenticated',
        request: { body: thing, bodies: { [ONE]: thing } },
        responses: { 200: { description: 'ok' } },
        handler: () => ({ status: 200 }),
      }),
    ).toThrow(/body or bodies/);
  });
});

describe('any one of several roles', () => {
  it('documents one security requirement per scheme and role', () => {
    const operation = registry().document({ info: { title: 't', version: '1' } }).paths?.['/things']?.post;
    expect(operation?.security).toEqual([
      { bearerAuth: ['producer'] },
      { bearerAuth: ['admin'] },
      { basicAuth: ['producer'] },
      { basicAuth: ['admin'] },
    ]);
    expect(operation?.responses?.['403']).toMatchObject({ description: 'Requires role producer or admin' });
  });

  it('lets either role through and answers 403 naming both to anyone else', async () => {
    const post = await start();
    expect((await post(ONE, '{"name":"a"}', 'u1 admin')).status).toBe(200);
    expect((await post(ONE, '{"name":"a"}', 'u1 producer other')).status).toBe(200);
    expect(await post(ONE, '{"name":"a"}', 'u1 viewer')).toEqual({
      status: 403,
      body: { type: 'urn:dx:acl:Forbidden', title: 'Forbidden', detail: 'requires role producer or admin' },
    });
  });
});
