import express from 'express';
import { beforeAll, describe, expect, it } from 'vitest';
import { createBasicVerifier } from '../../../src/auth/basic-verifier.js';
import { createJwtVerifier } from '../../../src/auth/jwt-verifier.js';
import { apiAuthentication, claimedIdentity } from '../../../src/http/auth-middleware.js';
import { VerifierBusyError } from '../../../src/auth/verifier-unavailable.js';
import type { Authenticators, BasicVerifier } from '../../../src/auth/verifiers.js';
import { hashSecret } from '../../../src/auth/secret-hash.js';
import { errorHandler } from '../../../src/http/error-handler.js';
import { RouteTable } from '../../../src/http/openapi/route-table.js';
import { requestContext } from '../../../src/http/request-context.js';
import { createUrnScheme } from '../../../src/http/urn.js';
import { capturedLogger, serve } from '../http/support/serve.js';
import type { CapturedLogs } from '../http/support/serve.js';
import { FAST } from '../auth/support/fast-scrypt.js';
import {
  AUDIENCE,
  ISSUER,
  ORG_ID,
  USER_ID,
  hs256WithPublicKey,
  jwksOf,
  signToken,
  standardClaims,
  testKey,
  unsignedToken,
} from '../auth/support/tokens.js';
import type { TestKey } from '../auth/support/tokens.js';

let key: TestKey;
let authenticators: Authenticators;

beforeAll(async () => {
  key = await testKey('ES256', 'dev-1');
  authenticators = {
    bearer: await createJwtVerifier({
      keys: { kind: 'jwks', jwks: jwksOf(key) },
      issuer: ISSUER,
      audience: AUDIENCE,
    }),
    basic: createBasicVerifier([
      { clientId: 'gateway', hash: await hashSecret('gateway-secret', FAST), roles: ['cos_admin'] },
    ]),
  };
});

/** `GET /me` for any caller, `GET /platform` for cos_admin only; both answer the principal. */
async function start(auth: Authenticators = authenticators): Promise<{ base: string; logs: CapturedLogs }> {
  const echo = ({
    principal,
  }: {
    principal: { id: string; kind: string; roles: ReadonlySet<string>; organisationId?: string };
  }) => ({
    status: 200,
    body: { ...principal, roles: [...principal.roles] },
  });
  const table = new RouteTable({ authentication: apiAuthentication(auth) })
    .add({
      method: 'get',
      path: '/me',
      operationId: 'me',
      summary: 'me',
      access: 'authenticated',
      responses: { 200: { description: 'me' } },
      handler: echo,
    })
    .add({
      method: 'get',
      path: '/platform',
      operationId: 'platform',
      summary: 'platform',
      access: { role: 'cos_admin' },
      responses: { 200: { description: 'me' } },
      handler: echo,
    });
  const logs = capturedLogger();
  const app = express();
  app.use(requestContext(logs.logger));
  app.use(table.router());
  app.use(errorHandler(createUrnScheme('acl')));
  return { base: await serve(app), logs };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
});

describe('authenticate', () => {
  it('accepts a valid bearer token and attaches the principal', async () => {
    const { base } = await start();
    const token = await signToken(key, { roles: ['org_admin'], org: ORG_ID });
    const response = await fetch(`${base}/me`, { headers: bearer(token) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      kind: 'user',
      id: USER_ID,
      roles: ['org_admin'],
      organisationId: ORG_ID,
    });
  });

  it('accepts Basic application credentials', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/me`, { headers: basic('gateway', 'gateway-secret') });
    expect(await response.json()).toMatchObject({ kind: 'application', id: 'gateway', roles: ['cos_admin'] });
  });

  it('answers missing credentials with 401 and a challenge per configured scheme', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/me`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      type: 'urn:dx:acl:Unauthorized',
      title: 'Unauthorized',
      detail: 'missing credentials',
    });
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer realm="policy-grant-operator", Basic realm="policy-grant-operator", charset="UTF-8"',
    );
  });

  it('only offers the schemes that are configured', async () => {
    const { base } = await start({ bearer: authenticators.bearer });
    const response = await fetch(`${base}/me`, { headers: basic('gateway', 'gateway-secret') });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { detail: string }).detail).toBe('unsupported authorization scheme');
    expect(response.headers.get('www-authenticate')).not.toContain('Basic');
  });

  it.each([
    ['expired', () => signToken(key, {}, { expiresIn: -120 }), 'token expired'],
    ['signed by another key', async () => signToken(await testKey('ES256', 'dev-1')), 'invalid token'],
    ['from another issuer', () => signToken(key, {}, { issuer: 'https://evil.example' }), 'invalid token'],
    ['for another audience', () => signToken(key, {}, { audience: 'other' }), 'invalid token'],
    ['with alg none', async () => unsignedToken(standardClaims()), 'invalid token'],
    ['with HS256 keyed by the public key', () => hs256WithPublicKey(key, standardClaims()), 'invalid token'],
    ['without sub', () => signToken(key, {}, { subject: null }), 'invalid token'],
    ['with a non-UUID sub', () => signToken(key, {}, { subject: 'alice' }), 'invalid token'],
    ['that is not a token', async () => 'not a token', 'invalid token'],
  ])('answers a bearer token %s with 401', async (_case, makeToken, reason) => {
    const { base, logs } = await start();
    const token = await makeToken();
    const response = await fetch(`${base}/me`, { headers: bearer(token) });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ type: 'urn:dx:acl:Unauthorized', detail: reason });
    expect(response.headers.get('www-authenticate')).toContain(
      `error="invalid_token", error_description="${reason}"`,
    );
    expect(logs.text()).toContain('authentication failed');
    if (token.length > 20) expect(logs.text()).not.toContain(token);
  });

  it.each([
    ['a wrong secret', basic('gateway', 'wrong')],
    ['an unknown client', basic('nobody', 'gateway-secret')],
    ['no separator', { authorization: `Basic ${Buffer.from('gateway').toString('base64')}` }],
    ['broken base64', { authorization: 'Basic ***' }],
  ])('answers Basic credentials with %s with 401', async (_case, headers) => {
    const { base } = await start();
    const response = await fetch(`${base}/me`, { headers });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { detail: string }).detail).toBe('invalid credentials');
  });

  it('answers an unknown scheme with 401', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/me`, { headers: { authorization: 'Digest username="x"' } });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { detail: string }).detail).toBe('unsupported authorization scheme');
  });

  it('answers 503 naming jwks when the keys cannot be fetched', async () => {
    const unreachable = await createJwtVerifier({
      keys: { kind: 'jwks-url', url: 'http://127.0.0.1:9/certs', timeoutMs: 500 },
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    const { base } = await start({ bearer: unreachable });
    const response = await fetch(`${base}/me`, { headers: bearer(await signToken(key)) });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { detail: string }).detail).toBe('jwks is unavailable');
  });

  it('answers 503 with Retry-After when the verifier is busy', async () => {
    const busy: BasicVerifier = {
      verify: () => Promise.reject(new VerifierBusyError('basic credential verification')),
    };
    const { base } = await start({ basic: busy });
    const authorization = `Basic ${Buffer.from('gateway:gateway-secret').toString('base64')}`;
    const response = await fetch(`${base}/me`, { headers: { authorization } });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(((await response.json()) as { detail: string }).detail).toBe(
      'basic credential verification is busy; retry later',
    );
  });
});

describe('role requirements', () => {
  it('lets a caller with the role through', async () => {
    const { base } = await start();
    const token = await signToken(key, { roles: 'cos_admin' });
    expect((await fetch(`${base}/platform`, { headers: bearer(token) })).status).toBe(200);
  });

  it('answers 403 to an authenticated caller without the role', async () => {
    const { base } = await start();
    const token = await signToken(key, { roles: ['org_admin'] });
    const response = await fetch(`${base}/platform`, { headers: bearer(token) });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      type: 'urn:dx:acl:Forbidden',
      title: 'Forbidden',
      detail: 'requires role cos_admin',
    });
  });

  it('answers 401, not 403, when credentials are missing', async () => {
    const { base } = await start();
    expect((await fetch(`${base}/platform`)).status).toBe(401);
  });
});

describe('apiAuthentication', () => {
  it('declares one security scheme per configured verifier', () => {
    expect(apiAuthentication(authenticators).schemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      basicAuth: { type: 'http', scheme: 'basic' },
    });
  });

  it('refuses to authenticate with no verifier at all', () => {
    expect(() => apiAuthentication({})).toThrow(/bearer or basic/);
  });
});

describe('claimedIdentity', () => {
  const basic = (userPass: string) => `Basic ${Buffer.from(userPass).toString('base64')}`;

  it('is the client id of Basic credentials, whatever the secret', () => {
    expect(claimedIdentity(basic('app:one'))).toBe('basic:app');
    expect(claimedIdentity(basic('app:two'))).toBe(claimedIdentity(basic('app:one')));
  });

  it('is a digest of anything else, the same for the same header and never the header itself', () => {
    const bearer = claimedIdentity('Bearer some.token.value');
    expect(bearer).toMatch(/^token:[A-Za-z0-9_-]{43}$/);
    expect(bearer).toBe(claimedIdentity('Bearer some.token.value'));
    expect(bearer).not.toBe(claimedIdentity('Bearer other.token.value'));
    expect(claimedIdentity('Basic %%%')).toMatch(/^token:/);
    expect(claimedIdentity('Negotiate abc')).toMatch(/^token:/);
  });
});
