import { describe, expect, it } from 'vitest';
import { createJwtVerifier } from '../../../src/auth/jwt-verifier.js';
import type { Principal } from '../../../src/auth/principal.js';
import type { BearerVerifier } from '../../../src/auth/verifiers.js';
import { decisionAuthenticators } from '../../../src/decision/caller-authentication.js';
import { AUDIENCE, ISSUER, USER_ID, jwksOf, signToken, testKey } from '../auth/support/tokens.js';

const CLUSTER_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const serviceAccount: Principal = {
  kind: 'application',
  id: 'system:serviceaccount:apps:reader',
  clientId: 'system:serviceaccount:apps:reader',
  roles: new Set(),
};

async function setUp() {
  const key = await testKey('ES256', 'idp');
  const jwt = await createJwtVerifier({
    keys: { kind: 'jwks', jwks: jwksOf(key) },
    issuer: ISSUER,
    audience: AUDIENCE,
  });
  const reviewed: string[] = [];
  const tokenReview: BearerVerifier = {
    async verify(token) {
      reviewed.push(token);
      return serviceAccount;
    },
  };
  const { bearer } = decisionAuthenticators(
    { bearer: jwt },
    { verifier: tokenReview, jwtIssuers: [ISSUER], serviceAccountIssuers: [CLUSTER_ISSUER] },
  );
  return { key, bearer: bearer as BearerVerifier, reviewed };
}

describe('decisionAuthenticators routes bearer tokens by issuer', () => {
  it('verifies the identity provider’s tokens as JWTs, without TokenReview', async () => {
    const { key, bearer, reviewed } = await setUp();
    expect((await bearer.verify(await signToken(key))).id).toBe(USER_ID);
    // A forged token naming the identity provider still goes to the JWT verifier, which rejects it.
    const other = await testKey('ES256', 'idp');
    await expect(bearer.verify(await signToken(other))).rejects.toThrow('invalid token');
    expect(reviewed).toEqual([]);
  });

  it('sends the ServiceAccount issuer’s tokens to TokenReview', async () => {
    const { key, bearer, reviewed } = await setUp();
    const clusterToken = await signToken(key, {}, { issuer: CLUSTER_ISSUER });
    expect(await bearer.verify(clusterToken)).toBe(serviceAccount);
    expect(reviewed).toEqual([clusterToken]);
  });

  it('refuses tokens of any other issuer, and opaque tokens, without a TokenReview', async () => {
    const { key, bearer, reviewed } = await setUp();
    for (let i = 0; i < 20; i++) {
      const foreign = await signToken(key, {}, { issuer: `https://issuer-${i}.example` });
      await expect(bearer.verify(foreign)).rejects.toThrow('invalid token');
    }
    await expect(bearer.verify('opaque-token')).rejects.toThrow('invalid token');
    expect(reviewed).toEqual([]);
  });

  it('verifies a cached JWT again once the identity provider’s keys were reloaded', async () => {
    const { key } = await setUp();
    const keys = { version: 1 };
    const verified: string[] = [];
    const jwt: BearerVerifier = {
      async verify(token) {
        verified.push(token);
        return serviceAccount;
      },
      keysVersion: () => keys.version,
    };
    const { bearer } = decisionAuthenticators(
      { bearer: jwt },
      { verifier: jwt, jwtIssuers: [ISSUER], serviceAccountIssuers: [CLUSTER_ISSUER] },
    );
    const token = await signToken(key);
    await bearer?.verify(token);
    await bearer?.verify(token);
    expect(verified).toHaveLength(1);
    keys.version = 2; // a JWKS reload: a key may have been withdrawn
    await bearer?.verify(token);
    expect(verified).toHaveLength(2);
  });

  it('keeps Basic and caches bearer verifications without TokenReview too', async () => {
    const calls: string[] = [];
    const bearer: BearerVerifier = {
      async verify(token) {
        calls.push(token);
        return serviceAccount;
      },
    };
    const basic = { verify: async () => serviceAccount };
    const authenticators = decisionAuthenticators({ bearer, basic, realm: 'r' });
    expect(authenticators.basic).toBe(basic);
    expect(authenticators.realm).toBe('r');
    await authenticators.bearer?.verify('t');
    await authenticators.bearer?.verify('t');
    expect(calls).toEqual(['t']);
  });
});
