import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { DEFAULT_TOKEN_CLAIM_NAMES, writeClaim } from '../../src/auth/token-claims.js';
import type { TokenClaimNames } from '../../src/auth/token-claims.js';
import type { DevSigningKey } from './dev-signing-key.js';

/** Issuer and audience of development tokens; the dev stack's services are configured to expect them. */
export const DEV_TOKEN_ISSUER = 'policy-grant-operator-dev';
export const DEV_TOKEN_AUDIENCE = 'policy-grant-operator';
export const DEFAULT_DEV_TOKEN_TTL_SECONDS = 3_600;

export interface MintTokenOptions {
  sub: string;
  roles?: readonly string[];
  org?: string;
  ttlSeconds?: number;
  issuer?: string;
  audience?: string;
  claimNames?: TokenClaimNames;
}

/** Signs a token with the development key. It checks nothing, so tests can mint bad tokens on purpose. */
export function mintToken(key: DevSigningKey, options: MintTokenOptions): Promise<string> {
  const names = options.claimNames ?? DEFAULT_TOKEN_CLAIM_NAMES;
  const claims: Record<string, unknown> = {};
  writeClaim(claims, names.roles, [...(options.roles ?? [])]);
  if (options.org !== undefined) writeClaim(claims, names.organisation, options.org);
  const issuedAt = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.algorithm, kid: key.kid, typ: 'JWT' })
    .setSubject(options.sub)
    .setIssuer(options.issuer ?? DEV_TOKEN_ISSUER)
    .setAudience(options.audience ?? DEV_TOKEN_AUDIENCE)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + (options.ttlSeconds ?? DEFAULT_DEV_TOKEN_TTL_SECONDS))
    .setJti(randomUUID())
    .sign(key.privateKey);
}
