import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, createRemoteJWKSet, errors, importJWK, jwtVerify } from 'jose';
import type { JSONWebKeySet, JWTVerifyGetKey, JWTVerifyOptions } from 'jose';
import { AuthenticationError } from './authentication-error.js';
import { VerifierUnavailableError } from './verifier-unavailable.js';
import type { BearerVerifier } from './verifiers.js';
import { DEFAULT_TOKEN_CLAIM_NAMES, principalFromClaims } from './token-claims.js';
import type { TokenClaimNames } from './token-claims.js';

/** Where verification keys come from. HMAC secrets exist only for deployments that ask for HS* explicitly. */
export type JwtKeySource =
  | { kind: 'jwks-url'; url: string; timeoutMs?: number }
  | { kind: 'jwks-file'; path: string }
  | { kind: 'jwks'; jwks: JSONWebKeySet }
  | { kind: 'hmac'; secret: Uint8Array };

export interface JwtVerifierOptions {
  keys: JwtKeySource;
  issuer: string | string[];
  audience: string | string[];
  /** Accepted `alg` values; RS256 and ES256 by default. `none` is never accepted. */
  algorithms?: readonly string[];
  clockToleranceSeconds?: number;
  /** Longest time after its `iat` a token is accepted, whatever its `exp`. */
  maxTokenAgeSeconds?: number;
  claimNames?: TokenClaimNames;
}

export const DEFAULT_JWT_ALGORITHMS: readonly string[] = ['RS256', 'ES256'];
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 10;
/**
 * A day: as long as the longest access-token lifetime identity providers issue by default (Auth0's), far longer
 * than most (Keycloak's minutes, Entra's hour); a token minted with a far `exp` still stops working after it.
 */
export const DEFAULT_MAX_TOKEN_AGE_SECONDS = 86_400;
/**
 * `typ` header values of an access token (RFC 9068 `at+jwt`, or the generic `JWT`), compared without case and
 * without an `application/` prefix (RFC 8725 3.11). A token without `typ` is accepted: most identity providers
 * leave it out. Any other type (a logout token, a DPoP proof, a security event token signed by the same issuer)
 * is not a credential for these APIs.
 */
const ACCESS_TOKEN_TYPES = new Set(['jwt', 'at+jwt']);
export const DEFAULT_JWKS_TIMEOUT_MS = 5_000;
/**
 * How long a fetched JWKS is used before it is fetched again (jose's default is 10 minutes): a key the
 * identity provider removes stops being accepted within this long. A new key is fetched as soon as a token
 * names it, at most once per 30 s (jose's cooldown, so forged kids cannot make every request fetch).
 */
export const JWKS_CACHE_MAX_AGE_MS = 30_000;
/** The dependency a 503 names when the JWKS cannot be fetched. */
export const JWKS_DEPENDENCY = 'jwks';

/** jose error codes that mean "this token is not acceptable", as opposed to "the keys are unavailable". */
const REJECTED_TOKEN_CODES = new Set([
  'ERR_JWT_CLAIM_VALIDATION_FAILED',
  'ERR_JWT_INVALID',
  'ERR_JWS_INVALID',
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  'ERR_JOSE_ALG_NOT_ALLOWED',
  'ERR_JOSE_NOT_SUPPORTED',
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
]);

/**
 * Verifies JWTs: signature against the configured keys (jose caches and rate-limits remote JWKS fetches),
 * allowed algorithm, issuer, audience, `exp` and `iat` (both required; the token no older than the maximum age)
 * with a small clock tolerance, the `typ` of an access token, then the claims that make the Principal. A JWKS file is read once here; the services watch it and build a new verifier when it
 * changes (config/auth-config.ts).
 */
export async function createJwtVerifier(options: JwtVerifierOptions): Promise<BearerVerifier> {
  const algorithms = checkedAlgorithms(options.algorithms ?? DEFAULT_JWT_ALGORITHMS, options.keys);
  const key = await keyResolver(options.keys);
  const claimNames = options.claimNames ?? DEFAULT_TOKEN_CLAIM_NAMES;
  const verifyOptions: JWTVerifyOptions = {
    issuer: options.issuer,
    audience: options.audience,
    algorithms,
    clockTolerance: options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS,
    maxTokenAge: options.maxTokenAgeSeconds ?? DEFAULT_MAX_TOKEN_AGE_SECONDS,
    requiredClaims: ['exp', 'iat', 'sub'],
  };
  return {
    async verify(token) {
      const { payload, protectedHeader } = await jwtVerify(token, key, verifyOptions).catch(
        rethrowClassified,
      );
      requireAccessTokenType(protectedHeader.typ);
      return principalFromClaims(payload, claimNames);
    },
  };
}

function requireAccessTokenType(typ: string | undefined): void {
  if (typ === undefined || ACCESS_TOKEN_TYPES.has(typ.toLowerCase().replace(/^application\//, ''))) return;
  throw new AuthenticationError('invalid token', { cause: new Error(`typ ${typ} is not an access token`) });
}

function checkedAlgorithms(algorithms: readonly string[], keys: JwtKeySource): string[] {
  if (algorithms.length === 0) throw new Error('at least one JWT algorithm must be allowed');
  if (algorithms.some((alg) => alg.toLowerCase() === 'none'))
    throw new Error('JWT algorithm "none" is never allowed');
  const symmetric = algorithms.filter((alg) => alg.startsWith('HS'));
  if (keys.kind === 'hmac' && symmetric.length !== algorithms.length) {
    throw new Error('an HMAC secret verifies HS* algorithms only');
  }
  if (keys.kind !== 'hmac' && symmetric.length > 0) {
    throw new Error('HS* algorithms need an explicitly configured HMAC secret');
  }
  return [...algorithms];
}

async function keyResolver(keys: JwtKeySource): Promise<JWTVerifyGetKey> {
  switch (keys.kind) {
    case 'jwks-url':
      return createRemoteJWKSet(new URL(keys.url), {
        timeoutDuration: keys.timeoutMs ?? DEFAULT_JWKS_TIMEOUT_MS,
        cacheMaxAge: JWKS_CACHE_MAX_AGE_MS,
      });
    case 'jwks-file':
      return createLocalJWKSet(await parseJwks(await readFile(keys.path, 'utf8')));
    case 'jwks':
      return createLocalJWKSet(keys.jwks);
    case 'hmac':
      return () => keys.secret;
  }
}

/**
 * A JWKS document, checked in full before it is used: JSON with at least one key, each with its key type, and
 * each key that names its algorithm importable with it (a damaged key fails here, not at the first token).
 */
export async function parseJwks(text: string): Promise<JSONWebKeySet> {
  const jwks = JSON.parse(text) as Partial<JSONWebKeySet> | null;
  const keys = jwks?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new Error('a JWKS needs a non-empty "keys" array');
  for (const [index, key] of keys.entries()) {
    if (typeof key?.kty !== 'string') throw new Error(`JWKS key ${index} has no "kty"`);
    if (key.alg !== undefined) await importJWK(key, key.alg);
  }
  return { keys };
}

function rethrowClassified(error: unknown): never {
  if (error instanceof errors.JWTExpired) throw new AuthenticationError('token expired', { cause: error });
  if (error instanceof errors.JOSEError && REJECTED_TOKEN_CODES.has(error.code)) {
    throw new AuthenticationError('invalid token', { cause: error });
  }
  throw new VerifierUnavailableError(JWKS_DEPENDENCY, { cause: error });
}
