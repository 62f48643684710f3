import { rateLimit } from 'express-rate-limit';
import type { Request, RequestHandler } from 'express';
import type { Counter } from 'prom-client';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../errors.js';
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

/**
 * Limits requests per authenticated subject (runs after authentication). Every answer carries the IETF
 * `RateLimit` and `RateLimit-Policy` headers (draft 8); past the limit, a 429 problem body with `Retry-After`.
 */
export function subjectRateLimit({ urn, name, limit, limited }: SubjectRateLimitOptions): RequestHandler {
  return rateLimit({
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
