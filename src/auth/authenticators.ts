import { readFile } from 'node:fs/promises';
import type { Registry as MetricsRegistry } from 'prom-client';
import type { Logger } from '../observability/logger.js';
import { parseApplicationCredentials, readMountedSecret } from './application-credentials.js';
import { createBasicVerifier } from './basic-verifier.js';
import type { ConcurrencyBound } from './concurrency-gate.js';
import { createJwtVerifier, parseJwks, type JwtVerifierOptions } from './jwt-verifier.js';
import { MountedContent } from './mounted-content.js';
import type { TokenClaimNames } from './token-claims.js';
import type { Authenticators, BasicVerifier, BearerVerifier } from './verifiers.js';

/** How callers of the ACL API and the decision service authenticate, as data (the services' `auth` setting). */
export interface AuthenticatorSettings {
  /** Where the JWT signing keys are: a JWKS URL, or a mounted JWKS file. */
  jwks: { url: string } | { file: string };
  issuer: string;
  audience: string;
  /** Accepted `alg` values; the JWT verifier's default when absent. */
  algorithms?: readonly string[];
  /** Longest time after its `iat` a token is accepted, whatever its `exp`; the JWT verifier's default when absent. */
  maxTokenAgeMs?: number;
  /** The token claims that carry the roles and the organisation; `roles` and `org` when absent. */
  claimNames?: TokenClaimNames;
  /** A mounted Secret: one file per application client id, holding its scrypt hash. No Basic when absent. */
  basicCredentialsDir?: string;
  /** How often the JWKS file and the credentials folder are read again; MountedContent's default when absent. */
  reloadIntervalMs?: number;
  /** Bound on scrypt verifications of Basic secrets; the Basic verifier's default when absent. */
  scrypt?: ConcurrencyBound;
}

/** The live parts the authenticators report to, and what stops their reloads. */
export interface AuthenticatorParts {
  /** The service's registry, for the Basic verifier's counter and the reload metrics. */
  metricsRegistry?: MetricsRegistry;
  /** Where a refused reload is logged. */
  logger?: Logger;
  /** Stops reading the mounted credentials again. */
  signal?: AbortSignal;
}

/**
 * The verifiers `settings` describe. A JWKS URL is fetched by the JWT verifier (and fetched again every 30 s); a
 * JWKS file and the Basic credentials folder are read again every `reloadIntervalMs`: a change applies without a
 * restart.
 */
export async function createAuthenticators(
  settings: AuthenticatorSettings,
  parts: AuthenticatorParts = {},
): Promise<Authenticators> {
  const watch = <T>(source: string, read: () => Promise<string>, build: (content: string) => Promise<T>) =>
    MountedContent.start({
      source,
      read,
      build,
      ...(settings.reloadIntervalMs === undefined ? {} : { intervalMs: settings.reloadIntervalMs }),
      ...parts,
    });
  const bearer = await bearerVerifier(settings, watch);
  const directory = settings.basicCredentialsDir;
  if (!directory) return { bearer };
  const basic = await watch(
    'basic-credentials',
    async () => JSON.stringify(await readMountedSecret(directory)),
    async (content) =>
      createBasicVerifier(parseApplicationCredentials(JSON.parse(content) as Record<string, string>), {
        ...(settings.scrypt ? { scrypt: settings.scrypt } : {}),
        ...(parts.metricsRegistry ? { metricsRegistry: parts.metricsRegistry } : {}),
      }),
  );
  return { bearer, basic: currentBasic(basic) };
}

type Watch = <T>(
  source: string,
  read: () => Promise<string>,
  build: (content: string) => Promise<T>,
) => Promise<MountedContent<T>>;

async function bearerVerifier(settings: AuthenticatorSettings, watch: Watch): Promise<BearerVerifier> {
  const options: Omit<JwtVerifierOptions, 'keys'> = {
    issuer: settings.issuer,
    audience: settings.audience,
    ...(settings.algorithms ? { algorithms: settings.algorithms } : {}),
    ...(settings.maxTokenAgeMs === undefined
      ? {}
      : { maxTokenAgeSeconds: Math.floor(settings.maxTokenAgeMs / 1000) }),
    ...(settings.claimNames ? { claimNames: settings.claimNames } : {}),
  };
  const { jwks } = settings;
  if ('url' in jwks) return createJwtVerifier({ ...options, keys: { kind: 'jwks-url', url: jwks.url } });
  return currentBearer(
    await watch(
      'jwks',
      () => readFile(jwks.file, 'utf8'),
      async (text) => createJwtVerifier({ ...options, keys: { kind: 'jwks', jwks: await parseJwks(text) } }),
    ),
  );
}

function currentBearer(verifiers: MountedContent<BearerVerifier>): BearerVerifier {
  return { verify: (token) => verifiers.current.verify(token), keysVersion: () => verifiers.version };
}

function currentBasic(verifiers: MountedContent<BasicVerifier>): BasicVerifier {
  return { verify: (clientId, secret, address) => verifiers.current.verify(clientId, secret, address) };
}
