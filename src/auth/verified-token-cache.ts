import { hash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { LRUCache } from 'lru-cache';
import { AuthenticationError } from './authentication-error.js';
import type { Principal } from './principal.js';
import type { Authenticators, BearerVerifier } from './verifiers.js';

export interface VerifiedTokenCacheOptions {
  /** Bound on remembered tokens; the least recently used go first. */
  maxEntries?: number;
  /** How long an accepted token is trusted without verifying it again; never past its own `exp`. */
  ttlMs?: number;
  /** How long a rejected token stays rejected without asking again (protects the TokenReview API). */
  rejectionTtlMs?: number;
  now?: () => number;
}

export const DEFAULT_TOKEN_CACHE_ENTRIES = 10_000;
export const DEFAULT_TOKEN_CACHE_TTL_MS = 60_000;
export const DEFAULT_TOKEN_REJECTION_TTL_MS = 10_000;

interface Entry {
  outcome: Promise<Principal>;
  /** The verifier's keys it was verified with. */
  keysVersion: number | undefined;
  /** Infinity while the verification is in flight: concurrent requests share it. */
  expiresAt: number;
}

/**
 * Remembers verifications by the SHA-256 of the token (tokenDigest; the token itself is never kept), so the hot path
 * verifies a signature or calls TokenReview once per token and TTL, not per request. Failures that are not
 * a verdict on the token (keys or API server unavailable) are not remembered, nor is anything past a change of
 * the verifier's keys.
 */
export function cachedBearerVerifier(
  verifier: BearerVerifier,
  options: VerifiedTokenCacheOptions = {},
): BearerVerifier {
  const maxEntries = options.maxEntries ?? DEFAULT_TOKEN_CACHE_ENTRIES;
  const ttlMs = options.ttlMs ?? DEFAULT_TOKEN_CACHE_TTL_MS;
  const rejectionTtlMs = options.rejectionTtlMs ?? DEFAULT_TOKEN_REJECTION_TTL_MS;
  const now = options.now ?? Date.now;
  const entries = new LRUCache<string, Entry>({ max: Math.max(1, maxEntries) });
  const keysVersion = () => verifier.keysVersion?.();

  const verifyAndRemember = (key: string, token: string): Entry => {
    const entry: Entry = {
      outcome: Promise.resolve().then(() => verifier.verify(token)),
      keysVersion: keysVersion(),
      expiresAt: Infinity,
    };
    entry.outcome.then(
      () => {
        entry.expiresAt = Math.min(now() + ttlMs, expiryOf(token));
      },
      (error: unknown) => {
        if (error instanceof AuthenticationError) entry.expiresAt = now() + rejectionTtlMs;
        else if (entries.peek(key) === entry) entries.delete(key);
      },
    );
    entries.set(key, entry);
    return entry;
  };

  return {
    verify(token, key = tokenDigest(token)) {
      const cached = entries.get(key);
      if (cached && cached.expiresAt > now() && cached.keysVersion === keysVersion()) return cached.outcome;
      return verifyAndRemember(key, token).outcome;
    },
  };
}

/** The SHA-256 of a bearer token (base64url): how a token is known without being kept. */
export function tokenDigest(token: string): string {
  return hash('sha256', token, 'base64url');
}

/** The authenticators with a cache of verified tokens in front of the bearer verifier (the ACL API's). */
export function withVerifiedTokenCache(
  authenticators: Authenticators,
  options: VerifiedTokenCacheOptions = {},
): Authenticators {
  const { bearer } = authenticators;
  return bearer ? { ...authenticators, bearer: cachedBearerVerifier(bearer, options) } : authenticators;
}

/** A JWT's `exp` in milliseconds; Infinity for tokens that are not JWTs or have none (the TTL bounds them). */
function expiryOf(token: string): number {
  try {
    const { exp } = decodeJwt(token);
    return typeof exp === 'number' ? exp * 1000 : Infinity;
  } catch {
    return Infinity;
  }
}
