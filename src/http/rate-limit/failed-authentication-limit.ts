import { LRUCache } from 'lru-cache';
import type { RequestHandler } from 'express';
import type { Counter } from 'prom-client';
import { identityClaimedBy, presentedCredential } from '../auth-middleware.js';
import { clientAddress } from '../client-address.js';
import { BusyError, HttpError } from '../errors.js';
import type { UrnScheme } from '../urn.js';
import type { RateLimit } from './request-limits.js';

export const FAILED_AUTHENTICATION_CLASS = 'failed-authentication';
/** Bound on remembered valid credentials: a digest each, so a few MiB at most. */
const REMEMBERED_CREDENTIALS = 10_000;
/**
 * Bound on failure counters (per address and per address and claimed identity): a few MiB at most. A flood
 * of distinct identities evicts the least recently counted first; an evicted counter starts again from zero,
 * which costs that key at most `limit` more verifications, each still behind the verifiers' own gates.
 */
const FAILURE_COUNTERS = 100_000;

export interface FailedAuthenticationLimitOptions {
  urn: UrnScheme;
  limit: RateLimit;
  limited: Counter<'service' | 'class'>;
}

/**
 * Wraps the authentication middleware so that failed authentications (401 to presented credentials) are
 * bounded without locking out any valid credential.
 *
 * Failures are counted in fixed windows twice: per client address and per client address and claimed
 * identity (the Basic client id, or the bearer token's digest). Past `limit.requests`:
 * - the claimed identity is refused with 429 before any verification (no scrypt, no TokenReview, no
 *   signature check), unless that exact credential verified within the window;
 * - the address alone refuses nothing unverified: every other credential is still verified, a valid one is
 *   answered, and only a failure answers 429 instead of 401.
 *
 * Invariant: another caller's failures never refuse a valid credential. Behind a gateway or a mesh every
 * caller shares one address, so a lockout of the address would let one flood of garbage deny every enforcement
 * point. What bounds the flood's cost is then the verifiers' own global gates (the scrypt gate, of which one
 * address holds at most a share, the bound on TokenReviews in flight, the cache of rejected tokens) and the
 * identity's lockout for repeated guesses; a JWT signature against cached keys costs microseconds. An attacker
 * who floods wrong secrets for an existing Basic client id locks that id out from that address for the window
 * (the classic trade-off of a lockout per account), except for its holder's credential that verified within
 * the window.
 *
 * A credential refused unverified because its verifier was busy counts against the address only (and is
 * answered 503): otherwise a flood from many addresses would keep the verifier's queue full without any
 * address reaching its limit, and the identity of a valid caller caught in the queue would be locked out.
 */
export function limitFailedAuthentication(
  authenticate: RequestHandler,
  { urn, limit, limited }: FailedAuthenticationLimitOptions,
): RequestHandler {
  const tooMany = (retryAfterSeconds: number) => {
    limited.inc({ service: urn.service, class: FAILED_AUTHENTICATION_CLASS });
    return new HttpError('TooManyRequests', `too many failed authentications from this address`, {
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  };
  const failures = failureCounters(limit);
  const verified = new LRUCache<string, true>({ max: REMEMBERED_CREDENTIALS, ttl: limit.windowMs });

  return async (req, res, next) => {
    const presented = presentedCredential(req);
    if (!presented) return authenticate(req, res, next);
    const credential = presented.digest();
    const address = clientAddress(req);
    const identity = `${address} ${identityClaimedBy(presented)}`;
    const lockedOut = failures.reached(identity);
    if (lockedOut !== undefined && !verified.has(credential)) return next(tooMany(lockedOut));
    const settle = (error?: unknown) => {
      if (error instanceof BusyError) failures.add(address);
      if (!rejected(error)) {
        if (!error) verified.set(credential, true);
        return next(error);
      }
      const overAddress = failures.add(address);
      const retryAfter = failures.add(identity) ?? overAddress;
      next(retryAfter === undefined ? error : tooMany(retryAfter));
    };
    try {
      await authenticate(req, res, settle);
    } catch (error) {
      settle(error);
    }
  };
}

interface FailureCounters {
  /** Seconds until the key's window ends when it has `limit.requests` failures or more; undefined otherwise. */
  reached(key: string): number | undefined;
  /** Counts one more failure; seconds until the window ends when that is past the limit, undefined otherwise. */
  add(key: string): number | undefined;
}

/** Fixed windows per key, in a bounded LRU: a window starts at its key's first failure. */
function failureCounters(limit: RateLimit): FailureCounters {
  const windows = new LRUCache<string, { failures: number; resetAt: number }>({ max: FAILURE_COUNTERS });
  const current = (key: string) => {
    const window = windows.get(key);
    return window && window.resetAt > Date.now() ? window : undefined;
  };
  const secondsLeft = (resetAt: number) => Math.max(1, Math.ceil((resetAt - Date.now()) / 1_000));
  return {
    reached(key) {
      const window = current(key);
      return window && window.failures >= limit.requests ? secondsLeft(window.resetAt) : undefined;
    },
    add(key) {
      const window = current(key) ?? { failures: 0, resetAt: Date.now() + limit.windowMs };
      window.failures++;
      windows.set(key, window);
      return window.failures > limit.requests ? secondsLeft(window.resetAt) : undefined;
    },
  };
}

/** A verdict on the presented credential (401). */
function rejected(error: unknown): boolean {
  return error instanceof HttpError && error.kind === 'Unauthorized';
}
