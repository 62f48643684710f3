import { MemoryStore, rateLimit } from 'express-rate-limit';
import type { Request, RequestHandler } from 'express';
import type { Counter } from 'prom-client';
import type { Principal } from '../../auth/principal.js';
import { HttpError, tooManyRequests } from '../errors.js';
import type { UrnScheme } from '../urn.js';
import { describeRateLimit } from './request-limits.js';
import type { RateLimit } from './request-limits.js';

/** Who a limit counts: the authenticated principal, kind and id (a user's sub, an application's id). */
export function subjectKey(principal: Pick<Principal, 'kind' | 'id'>): string {
  return `${principal.kind}:${principal.id}`;
}

export interface SubjectRateLimitOptions {
  urn: UrnScheme;
  /** The route class, the name the RateLimit and RateLimit-Policy headers give the policy. */
  name: string;
  limit: RateLimit;
  limited: Counter<'service' | 'class'>;
}

/** The work charger of each request a limit admitted: counts its further units against the same counter. */
const chargers = new WeakMap<Request, (units: number) => Promise<void>>();

/**
 * Counts the work a request causes against its subject's limit: `units` in all, of which its arrival counted
 * one (a batch of N events is N units). Call it once the units are known and before any of the work is done:
 * past the limit it throws the 429, and the request must then change nothing. A request no limit counted
 * (its class is unlimited) is not charged.
 */
export async function chargeWork(req: Request, units: number): Promise<void> {
  await chargers.get(req)?.(units);
}

/**
 * Limits requests per authenticated subject (runs after authentication). Every answer carries the IETF
 * `RateLimit` and `RateLimit-Policy` headers (draft 8); past the limit, a 429 problem body with `Retry-After`.
 * A request charges its further units of work with chargeWork.
 */
export function subjectRateLimit(options: SubjectRateLimitOptions): RequestHandler {
  const store = new MemoryStore();
  const limiter = countRequests(options, store);
  const { limit, name } = options;
  const refuse = (units: number, resetTime: Date | undefined) => {
    options.limited.inc({ service: options.urn.service, class: name });
    const detail =
      units > limit.requests
        ? `this request is ${units} units of work, more than the limit allows at all: ${describeRateLimit(limit)} (${name}); split it`
        : `rate limit exceeded by ${units} units of work: ${describeRateLimit(limit)} (${name})`;
    const retryAfter = resetTime ? Math.max(1, (resetTime.getTime() - Date.now()) / 1_000) : undefined;
    return tooManyRequests(detail, retryAfter);
  };
  return (req, res, next) => {
    chargers.set(req, async (units) => {
      if (units > limit.requests) throw refuse(units, undefined);
      for (let unit = 1; unit < units; unit++) {
        const { totalHits, resetTime } = await store.increment(subjectKey(authenticated(req)));
        if (totalHits > limit.requests) throw refuse(units, resetTime);
      }
    });
    return limiter(req, res, next);
  };
}

function countRequests(
  { urn, name, limit, limited }: SubjectRateLimitOptions,
  store: MemoryStore,
): RequestHandler {
  return rateLimit({
    store,
    windowMs: limit.windowMs,
    limit: limit.requests,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: name,
    keyGenerator: (req) => subjectKey(authenticated(req)),
    handler: (_req, _res, next) => {
      limited.inc({ service: urn.service, class: name });
      next(new HttpError('TooManyRequests', `rate limit exceeded: ${describeRateLimit(limit)} (${name})`));
    },
    // The key is the principal, never the address: the library's address checks do not apply.
    validate: { xForwardedForHeader: false, trustProxy: false },
  });
}

function authenticated(req: Request): Principal {
  if (!req.principal) throw new Error('the rate limit runs after authentication');
  return req.principal;
}
