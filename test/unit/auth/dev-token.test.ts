import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  DEV_JWKS_FILE,
  DEV_SIGNING_KEY_FILE,
  ensureDevSigningKey,
} from '../../../dev/tokens/dev-signing-key.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER, mintToken } from '../../../dev/tokens/dev-token.js';
import { createJwtVerifier } from '../../../src/auth/jwt-verifier.js';
import { ORG_ID, USER_ID } from './support/tokens.js';

const devDirectory = async () => join(await mkdtemp(join(tmpdir(), 'dev-')), '.dev');

describe('ensureDevSigningKey', () => {
  it('creates a private key readable by its owner only and a public JWKS', async () => {
    const directory = await devDirectory();
    const key = await ensureDevSigningKey(directory);
    expect((await stat(join(directory, DEV_SIGNING_KEY_FILE))).mode & 0o777).toBe(0o600);
    const jwks = JSON.parse(await readFile(join(directory, DEV_JWKS_FILE), 'utf8')) as {
      keys: Array<Record<string, unknown>>;
    };
    expect(jwks).toEqual(key.jwks);
    expect(jwks.keys).toEqual([
      expect.objectContaining({ kty: 'EC', crv: 'P-256', kid: key.kid, alg: 'ES256', use: 'sig' }),
    ]);
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('loads the same key the next time', async () => {
    const directory = await devDirectory();
    const first = await ensureDevSigningKey(directory);
    expect((await ensureDevSigningKey(directory)).kid).toBe(first.kid);
  });

  it('agrees on one key when two processes create it at once', async () => {
    const directory = await devDirectory();
    const keys = await Promise.all([1, 2, 3, 4].map(() => ensureDevSigningKey(directory)));
    expect(new Set(keys.map((key) => key.kid)).size).toBe(1);
  });
});

describe('mintToken', () => {
  it('mints a token that the verifier accepts through the JWKS file', async () => {
    const key = await ensureDevSigningKey(await devDirectory());
    const token = await mintToken(key, {
      sub: USER_ID,
      roles: ['org_admin', 'cos_admin'],
      org: ORG_ID,
      ttlSeconds: 60,
    });
    const verifier = await createJwtVerifier({
      keys: { kind: 'jwks-file', path: key.jwksPath },
      issuer: DEV_TOKEN_ISSUER,
      audience: DEV_TOKEN_AUDIENCE,
      algorithms: ['ES256'],
    });
    expect(await verifier.verify(token)).toEqual({
      kind: 'user',
      id: USER_ID,
      roles: new Set(['org_admin', 'cos_admin']),
      organisationId: ORG_ID,
    });
    const claims = decodeJwt(token);
    expect((claims.exp as number) - (claims.iat as number)).toBe(60);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', kid: key.kid });
  });

  it('writes roles under a configured nested claim', async () => {
    const key = await ensureDevSigningKey(await devDirectory());
    const claimNames = { roles: 'realm_access.roles', organisation: 'org' };
    const token = await mintToken(key, {
      sub: USER_ID,
      roles: ['cos_admin'],
      claimNames,
      issuer: 'i',
      audience: 'a',
    });
    expect(decodeJwt(token)).toMatchObject({ realm_access: { roles: ['cos_admin'] }, iss: 'i', aud: 'a' });
    const verifier = await createJwtVerifier({
      keys: { kind: 'jwks', jwks: key.jwks },
      issuer: 'i',
      audience: 'a',
      claimNames,
    });
    expect((await verifier.verify(token)).roles).toEqual(new Set(['cos_admin']));
  });
});
