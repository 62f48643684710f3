import { z } from 'zod';
import { DEFAULT_SCRYPT_BOUND } from '../auth/basic-verifier.js';
import type { ConcurrencyBound } from '../auth/concurrency-gate.js';
import type { RateLimit, RequestLimits } from '../http/rate-limit/request-limits.js';
import { parseDuration, parsedWith, readEnvironment } from './environment.js';

const DISABLED = new Set(['0', 'off']);
const RATE = /^(\d+)\/(\S+)$/;

/** `<requests>/<window>` such as `600/1m`; `0` or `off` means no limit (undefined). */
export function parseRateLimit(text: string): RateLimit | undefined {
  const trimmed = text.trim().toLowerCase();
  if (DISABLED.has(trimmed)) return undefined;
  const match = RATE.exec(trimmed);
  const requests = Number(match?.[1]);
  const windowMs = match?.[2] === undefined ? undefined : safeDuration(match[2]);
  if (!windowMs || !(requests >= 1)) {
    throw new Error(`"${text}" is not <requests>/<window> (e.g. 600/1m), 0 or off`);
  }
  return { requests, windowMs };
}

function safeDuration(text: string): number | undefined {
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

/** An environment variable holding a rate limit, e.g. `RATE_LIMIT_READ=6000/1m`, or `off`. */
export function rateLimitVariable(defaultLimit: string) {
  return z.string().default(defaultLimit).pipe(parsedWith(parseRateLimit));
}

const positiveInt = z.coerce.number().int().min(1);

export const DEFAULT_AUTH_FAILURE_LIMIT = '20/1m';

/** Limits on authentication, read by every service that authenticates callers. */
export const authLimitsEnvironment = z.object({
  /** Failed authentications per client address and window; past it, credentials get 429 unverified. */
  AUTH_FAILURE_LIMIT: rateLimitVariable(DEFAULT_AUTH_FAILURE_LIMIT),
  /** scrypt verifications of Basic secrets at once: each holds a core (and a libuv thread) for ~0.2 s. */
  BASIC_AUTH_CONCURRENCY: positiveInt.default(DEFAULT_SCRYPT_BOUND.concurrency),
  /** Basic verifications that may wait for one of those; past it, 503 with Retry-After. */
  BASIC_AUTH_QUEUE: z.coerce.number().int().min(0).default(DEFAULT_SCRYPT_BOUND.queue),
});

/** Route classes: the decision service's check, the ACL API's reads (GETs, POST /verify) and writes. */
export const DEFAULT_RATE_LIMITS = { check: '60000/1m', read: '6000/1m', write: '1200/1m' } as const;

export const aclRateLimitEnvironment = z.object({
  RATE_LIMIT_READ: rateLimitVariable(DEFAULT_RATE_LIMITS.read),
  RATE_LIMIT_WRITE: rateLimitVariable(DEFAULT_RATE_LIMITS.write),
});

export const decisionRateLimitEnvironment = z.object({
  /** The hot path: an enforcement point is one subject asking for all of its users. */
  RATE_LIMIT_CHECK: rateLimitVariable(DEFAULT_RATE_LIMITS.check),
});

/** The ACL API's limits from its environment. */
export function aclRequestLimits(env: NodeJS.ProcessEnv): RequestLimits {
  const classes = readEnvironment(aclRateLimitEnvironment, env);
  return {
    perSubject: { read: classes.RATE_LIMIT_READ, write: classes.RATE_LIMIT_WRITE },
    ...failedAuthenticationLimit(env),
  };
}

/** The decision service's limits from its environment. */
export function decisionRequestLimits(env: NodeJS.ProcessEnv): RequestLimits {
  const classes = readEnvironment(decisionRateLimitEnvironment, env);
  return { perSubject: { check: classes.RATE_LIMIT_CHECK }, ...failedAuthenticationLimit(env) };
}

function failedAuthenticationLimit(env: NodeJS.ProcessEnv): Pick<RequestLimits, 'failedAuthentication'> {
  const limit = readEnvironment(authLimitsEnvironment, env).AUTH_FAILURE_LIMIT;
  return limit ? { failedAuthentication: limit } : {};
}

/** The Basic verifier's scrypt bound from its environment. */
export function scryptBound(env: NodeJS.ProcessEnv): ConcurrencyBound {
  const limits = readEnvironment(authLimitsEnvironment, env);
  return { concurrency: limits.BASIC_AUTH_CONCURRENCY, queue: limits.BASIC_AUTH_QUEUE };
}
