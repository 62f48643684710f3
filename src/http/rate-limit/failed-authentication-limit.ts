import { createHash } from 'node:crypto';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { LRUCache } from 'lru-cache';
import type { AugmentedRequest } from 'express-rate-limit';
import type { Request, RequestHandler } from 'express';
import type { Counter } from 'prom-client';
import { BusyError, HttpError } from '../errors.js';
import type { UrnScheme } from '../urn.js';
import type { RateLimit } from './request-limits.js';

export const FAILED_AUTHENTICATION_CLASS = 'failed-authentication';
/** IPv6 clients are counted by /56, the smallest prefix an ISP commonly hands out. */
const IPV6_SUBNET = 56;
const FAILURES_PROPERTY = 'failedAuthentications';
/** Bound on remembered valid credentials: a digest each, so a few MiB at most. */
const REMEMBERED_CREDENTIALS = 10_000;

export interface FailedAuthenticationLimitOptions {
  urn: UrnScheme;
  limit: RateLimit;
  limited: Counter<'service' | 'class'>;
}

/**
 * Wraps the authentication middleware: failed authentications (401 to presented credentials) are counted per
 * client address, and once an address has `limit.requests` in the window its further requests with
 * credentials it has not seen verify get 429 before any verification (no scrypt, no TokenReview, no signature
 * check). Requests already verifying when the count is reached still finish: at most `limit.requests` plus the
 * concurrency.
 *
 * Invariant: a credential that verified within the window is still verified (and answered) from a locked-out
 * address. Behind a gateway or a mesh every caller shares one address, so a lockout of the address alone would
 * let one flood of garbage deny every enforcement point. The set holds SHA-256 digests of whole Authorization
 * headers, which only a holder of a valid credential can add to, so the bound on verifying garbage stays.
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
  const failures = rateLimit({
    windowMs: limit.windowMs,
    limit: limit.requests,
    keyGenerator: addressKey,
    standardHeaders: false,
    legacyHeaders: false,
    requestPropertyName: FAILURES_PROPERTY,
    handler: (req, _res, next) =>
      next(tooMany(secondsUntil((req as AugmentedRequest)[FAILURES_PROPERTY]?.resetTime, limit))),
  });

  const verified = new LRUCache<string, true>({ max: REMEMBERED_CREDENTIALS, ttl: limit.windowMs });

  return async (req, res, next) => {
    const authorization = req.get('authorization');
    if (!authorization) return authenticate(req, res, next);
    const credential = digest(authorization);
    const recorded = await failures.getKey(addressKey(req));
    if (recorded && recorded.totalHits >= limit.requests && !verified.has(credential))
      return next(tooMany(secondsUntil(recorded.resetTime, limit)));
    const settle = (error?: unknown) => {
      if (countsAsFailure(error)) void failures(req, res, (limited?: unknown) => next(limited ?? error));
      else {
        if (!error) verified.set(credential, true);
        next(error);
      }
    };
    try {
      await authenticate(req, res, settle);
    } catch (error) {
      settle(error);
    }
  };
}

/**
 * Rejected credentials, and credentials refused unverified because verification was busy: otherwise a flood
 * from many addresses would keep the verifier's queue full without any address ever reaching its limit.
 */
function countsAsFailure(error: unknown): boolean {
  return (error instanceof HttpError && error.kind === 'Unauthorized') || error instanceof BusyError;
}

function digest(authorization: string): string {
  return createHash('sha256').update(authorization).digest('base64url');
}

function addressKey(req: Request): string {
  return ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown', IPV6_SUBNET);
}

function secondsUntil(resetTime: Date | undefined, limit: RateLimit): number {
  const ms = resetTime ? resetTime.getTime() - Date.now() : limit.windowMs;
  return Math.max(1, Math.ceil(ms / 1_000));
}
