import { z } from 'zod';
import type { AuthenticatorSettings } from '../auth/authenticators.js';
import { DEFAULT_JWT_ALGORITHMS, DEFAULT_MAX_TOKEN_AGE_SECONDS } from '../auth/jwt-verifier.js';
import { DEFAULT_RELOAD_INTERVAL_MS } from '../auth/mounted-content.js';
import { booleanFlag, commaList, duration, readEnvironment } from './environment.js';
import { scryptBound } from './rate-limit-config.js';

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
    /** Longest time after its `iat` a token is accepted, whatever its `exp`. */
    JWT_MAX_AGE: duration.default(DEFAULT_MAX_TOKEN_AGE_SECONDS * 1000),
    ROLES_CLAIM: z.string().default('roles'),
    ORG_CLAIM: z.string().default('org'),
    /** A mounted Secret: one file per application client id, holding its scrypt hash (see docs). */
    BASIC_CREDENTIALS_DIR: z.string().optional(),
    /** How often JWKS_FILE and BASIC_CREDENTIALS_DIR are read again: changes apply without a restart. */
    CREDENTIALS_RELOAD_INTERVAL: duration.default(DEFAULT_RELOAD_INTERVAL_MS),
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

/** The authenticators' settings (createAuthenticators builds them) from environment variables. */
export function authSettingsFromEnvironment(env: NodeJS.ProcessEnv): AuthenticatorSettings {
  const auth = readEnvironment(authEnvironment, env);
  return {
    jwks: auth.JWKS_URL ? { url: auth.JWKS_URL } : { file: auth.JWKS_FILE as string },
    issuer: auth.JWT_ISSUER,
    audience: auth.JWT_AUDIENCE,
    algorithms: auth.JWT_ALGORITHMS,
    maxTokenAgeMs: auth.JWT_MAX_AGE,
    claimNames: { roles: auth.ROLES_CLAIM, organisation: auth.ORG_CLAIM },
    ...(auth.BASIC_CREDENTIALS_DIR ? { basicCredentialsDir: auth.BASIC_CREDENTIALS_DIR } : {}),
    reloadIntervalMs: auth.CREDENTIALS_RELOAD_INTERVAL,
    scrypt: scryptBound(env),
  };
}
