import { z } from 'zod';
import { readFile } from 'node:fs/promises';
import type { Registry as MetricsRegistry } from 'prom-client';
import { parseApplicationCredentials, readMountedSecret } from '../auth/application-credentials.js';
import { createBasicVerifier } from '../auth/basic-verifier.js';
import type { ConcurrencyBound } from '../auth/concurrency-gate.js';
import {
  createJwtVerifier,
  DEFAULT_JWT_ALGORITHMS,
  DEFAULT_MAX_TOKEN_AGE_SECONDS,
  parseJwks,
} from '../auth/jwt-verifier.js';
import type { JwtVerifierOptions } from '../auth/jwt-verifier.js';
import type { Authenticators, BasicVerifier, BearerVerifier } from '../auth/verifiers.js';
import type { Logger } from '../observability/logger.js';
import { booleanFlag, commaList, duration } from './environment.js';
import { DEFAULT_RELOAD_INTERVAL_MS, MountedContent } from './mounted-content.js';

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

export interface AuthenticatorOptions {
  /** Bound on scrypt verifications of Basic secrets. */
  scrypt?: ConcurrencyBound;
  /** The service's registry, for the Basic verifier's counter and the reload metrics. */
  metricsRegistry?: MetricsRegistry;
  /** Where a refused reload is logged. */
  logger?: Logger;
  /** Stops reading the mounted credentials again. */
  signal?: AbortSignal;
}

/**
 * The flag only decides what the configuration accepts; the verifier fetches whatever URL it is given (and
 * fetches it again every 30 s). A JWKS file and the Basic credentials folder are read again every
 * CREDENTIALS_RELOAD_INTERVAL: a change applies without a restart.
 */
export async function createAuthenticators(
  env: Omit<AuthEnvironment, 'JWKS_ALLOW_HTTP' | 'CREDENTIALS_RELOAD_INTERVAL' | 'JWT_MAX_AGE'> &
    Partial<Pick<AuthEnvironment, 'CREDENTIALS_RELOAD_INTERVAL' | 'JWT_MAX_AGE'>>,
  options: AuthenticatorOptions = {},
): Promise<Authenticators> {
  const verifierOptions: Omit<JwtVerifierOptions, 'keys'> = {
    issuer: env.JWT_ISSUER,
    audience: env.JWT_AUDIENCE,
    algorithms: env.JWT_ALGORITHMS,
    ...(env.JWT_MAX_AGE === undefined ? {} : { maxTokenAgeSeconds: Math.floor(env.JWT_MAX_AGE / 1000) }),
    claimNames: { roles: env.ROLES_CLAIM, organisation: env.ORG_CLAIM },
  };
  const watch = <T>(source: string, read: () => Promise<string>, build: (content: string) => Promise<T>) =>
    MountedContent.start({
      source,
      read,
      build,
      ...(env.CREDENTIALS_RELOAD_INTERVAL === undefined
        ? {}
        : { intervalMs: env.CREDENTIALS_RELOAD_INTERVAL }),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.metricsRegistry ? { metricsRegistry: options.metricsRegistry } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  const bearer: BearerVerifier = env.JWKS_URL
    ? await createJwtVerifier({ ...verifierOptions, keys: { kind: 'jwks-url', url: env.JWKS_URL } })
    : currentBearer(
        await watch(
          'jwks',
          () => readFile(env.JWKS_FILE as string, 'utf8'),
          async (text) =>
            createJwtVerifier({ ...verifierOptions, keys: { kind: 'jwks', jwks: await parseJwks(text) } }),
        ),
      );
  if (!env.BASIC_CREDENTIALS_DIR) return { bearer };
  const directory = env.BASIC_CREDENTIALS_DIR;
  const basic = await watch(
    'basic-credentials',
    async () => JSON.stringify(await readMountedSecret(directory)),
    async (content) =>
      createBasicVerifier(
        parseApplicationCredentials(JSON.parse(content) as Record<string, string>),
        options,
      ),
  );
  return { bearer, basic: currentBasic(basic) };
}

function currentBearer(verifiers: MountedContent<BearerVerifier>): BearerVerifier {
  return { verify: (token) => verifiers.current.verify(token), keysVersion: () => verifiers.version };
}

function currentBasic(verifiers: MountedContent<BasicVerifier>): BasicVerifier {
  return { verify: (clientId, secret, address) => verifiers.current.verify(clientId, secret, address) };
}
