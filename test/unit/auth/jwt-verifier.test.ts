import { createServer } from 'node:http';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONWebKeySet } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthenticationError } from '../../../src/auth/authentication-error.js';
import { JWKS_CACHE_MAX_AGE_MS, createJwtVerifier } from '../../../src/auth/jwt-verifier.js';
import type { JwtVerifierOptions } from '../../../src/auth/jwt-verifier.js';
import type { BearerVerifier } from '../../../src/auth/verifiers.js';
import { VerifierUnavailableError } from '../../../src/auth/verifier-unavailable.js';
import { serve } from '../http/support/serve.js';
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
} from './support/tokens.js';
import type { TestKey } from './support/tokens.js';

let rsa: TestKey;
let ec: TestKey;
let verifier: BearerVerifier;

const options = (overrides: Partial<JwtVerifierOptions> = {}): JwtVerifierOptions => ({
  keys: { kind: 'jwks', jwks: jwksOf(rsa, ec) },
  issuer: ISSUER,
  audience: AUDIENCE,
  ...overrides,
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('the token was accepted'),
    (error: unknown) => error,
  );
}

beforeAll(async () => {
  rsa = await testKey('RS256', 'rsa-1');
  ec = await testKey('ES256', 'ec-1');
  verifier = await createJwtVerifier(options());
});

describe('accepted tokens', () => {
  it('turns an RS256 token into a user principal', async () => {
    const token = await signToken(rsa, { roles: ['org_admin', 'provider'], org: ORG_ID });
    expect(await verifier.verify(token)).toEqual({
      kind: 'user',
      id: USER_ID,
      roles: new Set(['org_admin', 'provider']),
      organisationId: ORG_ID,
    });
  });

  it('accepts ES256 and a token without roles or organisation', async () => {
    expect(await verifier.verify(await signToken(ec))).toEqual({
      kind: 'user',
      id: USER_ID,
      roles: new Set(),
    });
  });

  it.each([['at+jwt'], ['application/at+jwt'], ['JWT'], [null]])(
    'accepts an access token whose typ is %s',
    async (typ) => {
      expect((await verifier.verify(await signToken(rsa, {}, { typ }))).id).toBe(USER_ID);
    },
  );

  it('tolerates a little clock skew', async () => {
    expect((await verifier.verify(await signToken(rsa, {}, { expiresIn: -3 }))).id).toBe(USER_ID);
  });
});

describe('rejected tokens', () => {
  it('says "token expired" for an expired token', async () => {
    const error = await rejection(verifier.verify(await signToken(rsa, {}, { expiresIn: -60 })));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ reason: 'token expired' });
  });

  it('says "token expired" for a token issued longer ago than the maximum age, whatever its exp', async () => {
    const old = await signToken(rsa, {}, { issuedAgo: 86_400 + 60, expiresIn: 3_600 });
    expect(await rejection(verifier.verify(old))).toMatchObject({ reason: 'token expired' });
    const strict = await createJwtVerifier(options({ maxTokenAgeSeconds: 600 }));
    const minutes = await signToken(rsa, {}, { issuedAgo: 660 });
    expect(await rejection(strict.verify(minutes))).toMatchObject({ reason: 'token expired' });
    expect((await verifier.verify(minutes)).id).toBe(USER_ID);
  });

  it.each([
    ['without iat', () => signToken(rsa, {}, { issuedAgo: null })],
    ['issued in the future', () => signToken(rsa, {}, { issuedAgo: -120 })],
    ['of another type (a logout token)', () => signToken(rsa, {}, { typ: 'logout+jwt' })],
    [
      'of another type (an id token by its media type)',
      () => signToken(rsa, {}, { typ: 'application/id_token+jwt' }),
    ],
    ['signed by an unknown key under a known kid', async () => signToken(await testKey('RS256', 'rsa-1'))],
    ['from another issuer', () => signToken(rsa, {}, { issuer: 'https://evil.example' })],
    ['for another audience', () => signToken(rsa, {}, { audience: 'another-service' })],
    ['without exp', () => signToken(rsa, {}, { expiresIn: null })],
    ['without sub', () => signToken(rsa, {}, { subject: null })],
    ['whose sub is not a UUID', () => signToken(rsa, {}, { subject: 'alice' })],
    ['with alg none', async () => unsignedToken(standardClaims())],
    ['with HS256 keyed by the public key', () => hs256WithPublicKey(rsa, standardClaims())],
    ['with malformed roles', () => signToken(rsa, { roles: [1, 2] })],
    ['whose organisation is not a UUID', () => signToken(rsa, { org: 'acme' })],
    ['that is not a JWT', async () => 'not-a-jwt'],
  ])('says "invalid token" for a token %s', async (_case, makeToken) => {
    const error = await rejection(verifier.verify(await makeToken()));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ reason: 'invalid token' });
  });
});

describe('claims', () => {
  it('reads roles from a space-separated string', async () => {
    const principal = await verifier.verify(
      await signToken(rsa, { roles: 'org_admin  cos_admin', org: ORG_ID }),
    );
    expect(principal.roles).toEqual(new Set(['org_admin', 'cos_admin']));
  });

  it('org_admin without an organisation claim administers nothing: the role is dropped', async () => {
    const principal = await verifier.verify(await signToken(rsa, { roles: ['org_admin', 'cos_admin'] }));
    expect(principal.roles).toEqual(new Set(['cos_admin']));
  });

  it('reads roles and organisation from configured claims, nested by a dotted path', async () => {
    const keycloak = await createJwtVerifier(
      options({ claimNames: { roles: 'realm_access.roles', organisation: 'https://dx.example/org' } }),
    );
    const token = await signToken(rsa, {
      realm_access: { roles: ['cos_admin'] },
      'https://dx.example/org': ORG_ID,
      roles: ['ignored'],
    });
    expect(await keycloak.verify(token)).toMatchObject({
      roles: new Set(['cos_admin']),
      organisationId: ORG_ID,
    });
  });
});

describe('configuration', () => {
  it('never allows alg none', async () => {
    await expect(createJwtVerifier(options({ algorithms: ['none'] }))).rejects.toThrow(/never allowed/);
  });

  it('refuses HS* unless an HMAC secret is configured, and an HMAC secret for other algorithms', async () => {
    await expect(createJwtVerifier(options({ algorithms: ['RS256', 'HS256'] }))).rejects.toThrow(
      /HMAC secret/,
    );
    await expect(
      createJwtVerifier(
        options({ keys: { kind: 'hmac', secret: new Uint8Array(32) }, algorithms: ['RS256'] }),
      ),
    ).rejects.toThrow(/HS\* algorithms only/);
  });

  it('verifies HS256 when it is configured explicitly', async () => {
    const secret = new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!');
    const hmac = await createJwtVerifier(options({ keys: { kind: 'hmac', secret }, algorithms: ['HS256'] }));
    const { SignJWT } = await import('jose');
    const token = await new SignJWT(standardClaims()).setProtectedHeader({ alg: 'HS256' }).sign(secret);
    expect((await hmac.verify(token)).id).toBe(USER_ID);
  });

  it('limits the accepted algorithms', async () => {
    const esOnly = await createJwtVerifier(options({ algorithms: ['ES256'] }));
    await expect(esOnly.verify(await signToken(rsa))).rejects.toMatchObject({ reason: 'invalid token' });
  });
});

describe('key sources', () => {
  it('reads a JWKS file', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'jwks-')), 'jwks.json');
    await writeFile(path, JSON.stringify(jwksOf(ec)));
    const fromFile = await createJwtVerifier(options({ keys: { kind: 'jwks-file', path } }));
    expect((await fromFile.verify(await signToken(ec))).id).toBe(USER_ID);
  });

  it('fetches a JWKS from a URL', async () => {
    const base = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(jwksOf(rsa)));
    });
    const remote = await createJwtVerifier(options({ keys: { kind: 'jwks-url', url: `${base}/certs` } }));
    expect((await remote.verify(await signToken(rsa))).id).toBe(USER_ID);
  });

  it('is unavailable naming jwks when the JWKS cannot be fetched', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const remote = await createJwtVerifier(
      options({ keys: { kind: 'jwks-url', url: `http://127.0.0.1:${port}/certs` } }),
    );
    const error = await rejection(remote.verify(await signToken(rsa)));
    expect(error).toBeInstanceOf(VerifierUnavailableError);
    expect(error).toMatchObject({ dependency: 'jwks', message: 'jwks is unavailable' });
  });
});

/**
 * A JWKS endpoint on loopback that the test controls: what it serves, whether it answers at all, and how
 * often it was asked.
 */
async function jwksEndpoint(initial: JSONWebKeySet) {
  const state = { jwks: initial, hanging: false, requests: 0 };
  const base = await serve((_req, res) => {
    state.requests++;
    if (state.hanging) return; // accepts, never answers
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(state.jwks));
  });
  return { state, url: `${base}/certs` };
}

describe('JWKS rotation', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a new key is fetched when a token names it; a retired key is refused within the JWKS cache age', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const rotated = await testKey('RS256', 'rsa-2');
    const endpoint = await jwksEndpoint(jwksOf(rsa));
    const remote = await createJwtVerifier(options({ keys: { kind: 'jwks-url', url: endpoint.url } }));
    expect((await remote.verify(await signToken(rsa))).id).toBe(USER_ID);
    expect(endpoint.state.requests).toBe(1);

    // The identity provider publishes the next key beside the current one, later signs with it.
    endpoint.state.jwks = jwksOf(rsa, rotated);
    vi.setSystemTime(Date.now() + 31_000);
    expect((await remote.verify(await signToken(rotated))).id).toBe(USER_ID);
    expect(endpoint.state.requests).toBe(2);
    expect((await remote.verify(await signToken(rsa))).id).toBe(USER_ID);

    // Then it retires the old key: tokens signed with it fail once the cached JWKS is too old to use.
    endpoint.state.jwks = jwksOf(rotated);
    vi.setSystemTime(Date.now() + JWKS_CACHE_MAX_AGE_MS - 1_000);
    expect((await remote.verify(await signToken(rsa))).id).toBe(USER_ID);
    vi.setSystemTime(Date.now() + 2_000);
    await expect(remote.verify(await signToken(rsa))).rejects.toMatchObject({ reason: 'invalid token' });
    expect(endpoint.state.requests).toBe(3);
    expect((await remote.verify(await signToken(rotated))).id).toBe(USER_ID);
  });

  it('an unknown kid right after a fetch is refused without fetching again (no fetch per forged kid)', async () => {
    const endpoint = await jwksEndpoint(jwksOf(rsa));
    const remote = await createJwtVerifier(options({ keys: { kind: 'jwks-url', url: endpoint.url } }));
    await remote.verify(await signToken(rsa));
    const stranger = await testKey('RS256', 'rsa-unknown');
    for (let attempt = 0; attempt < 3; attempt++) {
      await expect(remote.verify(await signToken(stranger))).rejects.toMatchObject({
        reason: 'invalid token',
      });
    }
    expect(endpoint.state.requests).toBe(1);
  });
});

describe('a hanging JWKS endpoint', () => {
  const hangingOptions = (url: string) => options({ keys: { kind: 'jwks-url', url, timeoutMs: 200 } });

  it('is unavailable naming jwks after the fetch timeout; concurrent requests share the one fetch', async () => {
    const endpoint = await jwksEndpoint(jwksOf(rsa));
    endpoint.state.hanging = true;
    const remote = await createJwtVerifier(hangingOptions(endpoint.url));
    const token = await signToken(rsa);
    const failures = await Promise.all(Array.from({ length: 5 }, () => rejection(remote.verify(token))));
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(VerifierUnavailableError);
      expect(failure).toMatchObject({ dependency: 'jwks', message: 'jwks is unavailable' });
    }
    expect(endpoint.state.requests).toBe(1);

    endpoint.state.hanging = false;
    expect((await remote.verify(token)).id).toBe(USER_ID);
  });

  it('keys already fetched keep verifying while the endpoint hangs', async () => {
    const endpoint = await jwksEndpoint(jwksOf(rsa));
    const remote = await createJwtVerifier(hangingOptions(endpoint.url));
    await remote.verify(await signToken(rsa));
    endpoint.state.hanging = true;
    expect((await remote.verify(await signToken(rsa, { roles: ['provider'] }))).roles).toEqual(
      new Set(['provider']),
    );
    expect(endpoint.state.requests).toBe(1);
  });
});
