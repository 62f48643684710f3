import { z } from 'zod';
import { parseApplicationCredentials, readMountedSecret } from '../auth/application-credentials.js';
import type { Registry } from 'prom-client';
import { createBasicVerifier } from '../auth/basic-verifier.js';
import type { ConcurrencyBound } from '../auth/concurrency-gate.js';
import { createJwtVerifier, DEFAULT_JWT_ALGORITHMS, type JwtKeySource } from '../auth/jwt-verifier.js';
import type { Authenticators } from '../auth/middleware.js';
import { booleanFlag, commaList } from './environment.js';

/** How callers of the ACL API and the decision service authenticate. */
export const authEnvironment = z
  .object({
    JWKS_URL: z.url().optional(),
    /** Development only: accept an http JWKS_URL (keys fetched in clear can be swapped on the way). */
    JWKS_ALLOW_HTTP: booleanFlag.default(false),
    JWKS_FILE: z.string().optional(),
    JWT_ISSUER: z.string().min(1),
    JWT_AUDIENCE: z.string().min(1),
    JWT_ALGORITHMS: commaList.default([...DEFAULT_JWT_ALGORITHMS]),
    ROLES_CLAIM: z.string().default('roles'),
    ORG_CLAIM: z.string().default('org'),
    /** A mounted Secret: one file per application client id, holding its scrypt hash (see docs). */
    BASIC_CREDENTIALS_DIR: z.string().optional(),
  })
  .refine((env) => !!env.JWKS_URL !== !!env.JWKS_FILE, {
    message: 'set exactly one of JWKS_URL and JWKS_FILE',
    path: ['JWKS_URL'],
  })
  .refine((env) => !env.JWKS_URL || allowedJwksUrl(env.JWKS_URL, env.JWKS_ALLOW_HTTP), {
    message: 'must be an https URL (http only for development, with JWKS_ALLOW_HTTP=true)',
    path: ['JWKS_URL'],
  });

/** A URL that does not parse is JWKS_URL's own issue already. */
function allowedJwksUrl(url: string, allowHttp: boolean): boolean {
  if (!URL.canParse(url)) return true;
  const { protocol } = new URL(url);
  return protocol === 'https:' || (allowHttp && protocol === 'http:');
}

export type AuthEnvironment = z.output<typeof authEnvironment>;

export interface AuthenticatorOptions {
  /** Bound on scrypt verifications of Basic secrets. */
  scrypt?: ConcurrencyBound;
  /** The service's registry, for the Basic verifier's counter. */
  metricsRegistry?: Registry;
}

/** The flag only decides what the configuration accepts; the verifier fetches whatever URL it is given. */
export async function createAuthenticators(
  env: Omit<AuthEnvironment, 'JWKS_ALLOW_HTTP'>,
  options: AuthenticatorOptions = {},
): Promise<Authenticators> {
  const keys: JwtKeySource = env.JWKS_URL
    ? { kind: 'jwks-url', url: env.JWKS_URL }
    : { kind: 'jwks-file', path: env.JWKS_FILE as string };
  const bearer = await createJwtVerifier({
    keys,
    issuer: env.JWT_ISSUER,
    audience: env.JWT_AUDIENCE,
    algorithms: env.JWT_ALGORITHMS,
    claimNames: { roles: env.ROLES_CLAIM, organisation: env.ORG_CLAIM },
  });
  if (!env.BASIC_CREDENTIALS_DIR) return { bearer };
  const credentials = parseApplicationCredentials(await readMountedSecret(env.BASIC_CREDENTIALS_DIR));
  return { bearer, basic: createBasicVerifier(credentials, options) };
}
