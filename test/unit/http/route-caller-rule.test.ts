import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CallerRule } from '../../../src/http/openapi/route-definition.js';
import { RouteTable } from '../../../src/http/openapi/route-table.js';
import { serveRoutes, testAuthentication } from './support/sample-api.js';
import { capturedLogger } from './support/serve.js';

// Routes with a caller rule of their own (who may call is more than a role): the router answers 403 with the
// rule's requirement before it reads the body, and the document describes that 403.

const onlyEnforcers: CallerRule = {
  admits: (principal) => principal.id.startsWith('enforcer'),
  requirement: 'only enforcers may ask',
};

function registry(): RouteTable {
  return new RouteTable({ authentication: testAuthentication }).add({
    method: 'post',
    path: '/ask',
    operationId: 'ask',
    summary: 'Ask something',
    access: { callers: onlyEnforcers },
    request: { body: z.object({ question: z.string().min(1) }) },
    responses: { 200: { description: 'Answered', schema: z.object({ answer: z.string() }) } },
    handler: ({ principal }) => ({ status: 200, body: { answer: `yes, ${principal.id}` } }),
  });
}

async function start(logs = capturedLogger()) {
  const base = await serveRoutes(registry(), logs.logger);
  return async (user: string | undefined, body: string) => {
    const response = await fetch(`${base}/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(user ? { 'x-test-user': user } : {}) },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
}

describe('a route with a caller rule', () => {
  it('answers the callers the rule admits', async () => {
    const ask = await start();
    expect(await ask('enforcer-1', '{"question":"q"}')).toEqual({
      status: 200,
      body: { answer: 'yes, enforcer-1' },
    });
  });

  it('answers 403 with the requirement to anyone else, before looking at the body', async () => {
    const ask = await start();
    const forbidden = {
      status: 403,
      body: { type: 'urn:dx:acl:Forbidden', title: 'Forbidden', detail: 'only enforcers may ask' },
    };
    expect(await ask('someone admin', '{"question":"q"}')).toEqual(forbidden);
    expect(await ask('someone', '{"question":""}')).toEqual(forbidden);
    expect(await ask('someone', 'not json')).toEqual(forbidden);
  });

  it('logs who was refused', async () => {
    const logs = capturedLogger();
    await (
      await start(logs)
    )('someone', '{"question":"q"}');
    expect(await logs.line('caller refused by the route')).toMatchObject({
      caller: 'someone',
      callerKind: 'user',
    });
  });

  it('answers 401 when authentication set no principal', async () => {
    expect((await (await start())(undefined, '{"question":"q"}')).status).toBe(401);
  });

  it('documents the 403 with the requirement, and any scheme as the security requirement', () => {
    const operation = registry().document({ info: { title: 't', version: '1' } }).paths?.['/ask']?.post;
    expect(operation?.security).toEqual([{ bearerAuth: [] }]);
    expect(operation?.responses?.['403']).toMatchObject({ description: 'only enforcers may ask' });
  });
});
