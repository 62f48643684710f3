import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDevSigningKey } from '../../../dev/tokens/dev-signing-key.js';
import { mintToken } from '../../../dev/tokens/dev-token.js';
import { AclHarness, BASIC_CLIENT_ID, type Caller } from './support/acl-harness.js';

// Every ACL route needs credentials: a JWT verified against the JWKS (key, algorithm, issuer, audience,
// expiry, age, type) or Basic application credentials. Anything else is a 401 with the envelope.

const harness = new AclHarness();
let otherKeyDir: string;

beforeAll(async () => {
  await harness.start('acl-auth');
  otherKeyDir = await mkdtemp(join(tmpdir(), 'acl-other-key-'));
});

afterAll(async () => {
  await harness.stop();
  await rm(otherKeyDir, { recursive: true, force: true });
});

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function unsignedToken(sub: string): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    sub,
    iss: 'policy-grant-operator-dev',
    aud: 'policy-grant-operator',
    iat: now,
    exp: now + 600,
  };
  return `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`;
}

/** A token of the dev key with the given header type and issue time (seconds ago; null for no iat). */
function devSigned(typ: string | undefined, issuedAgo: number | null): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const token = new SignJWT({})
    .setProtectedHeader({ alg: harness.key.algorithm, kid: harness.key.kid, ...(typ ? { typ } : {}) })
    .setSubject(randomUUID())
    .setIssuer('policy-grant-operator-dev')
    .setAudience('policy-grant-operator')
    .setExpirationTime(now + 3_600);
  if (issuedAgo !== null) token.setIssuedAt(now - issuedAgo);
  return token.sign(harness.key.privateKey);
}

const forged: [string, () => Promise<string>][] = [
  ['issued more than a day ago, though its exp is an hour away', () => devSigned('JWT', 86_400 + 120)],
  ['without iat', () => devSigned('at+jwt', null)],
  ['whose typ is not an access token (a logout token)', () => devSigned('logout+jwt', 0)],
  ['expired', () => mintToken(harness.key, { sub: randomUUID(), ttlSeconds: -120 })],
  [
    'signed with another key',
    async () => mintToken(await ensureDevSigningKey(otherKeyDir), { sub: randomUUID() }),
  ],
  ['of another issuer', () => mintToken(harness.key, { sub: randomUUID(), issuer: 'https://evil.example' })],
  ['for another audience', () => mintToken(harness.key, { sub: randomUUID(), audience: 'another-service' })],
  ['with alg none', async () => unsignedToken(randomUUID())],
  [
    'HS256 keyed with the public key (algorithm confusion)',
    async () =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', kid: harness.key.kid })
        .setSubject(randomUUID())
        .setIssuer('policy-grant-operator-dev')
        .setAudience('policy-grant-operator')
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(JSON.stringify(harness.key.jwks.keys[0]))),
  ],
  ['whose sub is not a UUID', () => mintToken(harness.key, { sub: 'alice' })],
  ['that is not a JWT', async () => 'not.a.jwt'],
];

const routes: [string, string, unknown?][] = [
  ['POST', '/policy', { request: [] }],
  ['DELETE', `/policy?id=${randomUUID()}`],
  ['GET', '/policy/consumer'],
  ['GET', '/policy/provider'],
  ['GET', '/policy/organisation'],
  ['GET', '/policy/platform'],
  ['POST', '/verify', { user: { id: randomUUID() }, item: { itemId: 'urn:x' } }],
];

function expectUnauthorized(answer: { status: number; body: Record<string, unknown>; headers: Headers }) {
  expect(answer.status).toBe(401);
  expect(answer.body).toMatchObject({ type: 'urn:dx:acl:Unauthorized', title: 'Unauthorized' });
  expect(typeof answer.body.detail).toBe('string');
  expect(answer.headers.get('www-authenticate')).toContain('Bearer');
}

describe('401 with the envelope', () => {
  it.each(routes)('%s %s without credentials', async (method, path, body) => {
    expectUnauthorized(await harness.request(method, path, body === undefined ? {} : { body }));
  });

  it.each(forged)('a token %s', async (_name, token) => {
    const caller: Caller = { id: '', authorization: `Bearer ${await token()}` };
    for (const [method, path, body] of routes) {
      expectUnauthorized(
        await harness.request(method, path, { caller, ...(body === undefined ? {} : { body }) }),
      );
    }
  });

  it('an unsupported scheme, or a malformed header', async () => {
    for (const authorization of [
      'Digest abc',
      'Bearer',
      'Bearer a b',
      'Basic !!!',
      'Basic ' + btoa('nocolon'),
    ]) {
      expectUnauthorized(
        await harness.request('GET', '/policy/consumer', { caller: { id: '', authorization } }),
      );
    }
  });

  it('a token is accepted otherwise (the same request with a good token: 200)', async () => {
    const answer = await harness.request('GET', '/policy/consumer', { caller: await harness.user() });
    expect(answer.status).toBe(200);
    for (const token of [await devSigned('at+jwt', 0), await devSigned(undefined, 3_600)]) {
      const caller = { id: '', authorization: `Bearer ${token}` };
      expect((await harness.request('GET', '/policy/consumer', { caller })).status).toBe(200);
    }
  });
});

describe('Basic application credentials', () => {
  it('the right secret: 200', async () => {
    const answer = await harness.request('GET', '/policy/consumer', { caller: harness.basicCaller() });
    expect(answer.status).toBe(200);
  });

  it('a wrong secret or an unknown client: 401', async () => {
    expectUnauthorized(
      await harness.request('GET', '/policy/consumer', { caller: harness.basicCaller('wrong') }),
    );
    const unknown = `Basic ${Buffer.from(`someone-else:${'x'}`).toString('base64')}`;
    expectUnauthorized(
      await harness.request('GET', '/policy/consumer', { caller: { id: '', authorization: unknown } }),
    );
  });

  it('an application without a userId cannot issue grants (issuerId is a user UUID): 403', async () => {
    const orgId = randomUUID();
    const owner = await harness.user({ org: orgId });
    const item = await harness.catalogItem({ ownerId: owner.id, organisationId: orgId });
    const answer = await harness.request<{ detail: string }>('POST', '/policy', {
      caller: harness.basicCaller(),
      body: {
        request: [
          {
            policyType: 'INDIVIDUAL',
            userId: randomUUID(),
            itemId: item.spec.itemId,
            itemType: 'DATABANK',
            expiryTime: '2099-01-01T00:00:00Z',
            constraints: { access: [{ accessType: 'api' }] },
          },
        ],
      },
    });
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toContain(BASIC_CLIENT_ID);
  });
});
