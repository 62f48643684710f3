import express from 'express';
import type { RequestHandler } from 'express';
import { describe, expect, it } from 'vitest';
import { busy, dependencyUnavailable, HttpError } from '../../../src/http/errors.js';
import { errorHandler } from '../../../src/http/error-handler.js';
import { limitFailedAuthentication } from '../../../src/http/rate-limit/failed-authentication-limit.js';
import { rateLimitedRequests } from '../../../src/http/rate-limit/rate-limit-metrics.js';
import { createUrnScheme } from '../../../src/http/urn.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { capturedLogger, serve } from './support/serve.js';

const urn = createUrnScheme('acl');

/** A stand-in for authenticate(): the Authorization header says how it ends; counts what it verified. */
function fakeAuthentication() {
  const verified: string[] = [];
  const middleware: RequestHandler = async (req, _res, next) => {
    const header = req.get('authorization') ?? '';
    verified.push(header);
    if (header === 'good') return next();
    if (header === 'busy') throw busy('basic credential verification');
    if (header === 'outage') throw dependencyUnavailable('jwks');
    next(new HttpError('Unauthorized', 'invalid credentials'));
  };
  return { middleware, verified };
}

async function start(limit = 3) {
  const authentication = fakeAuthentication();
  const registry = createMetricsRegistry();
  const app = express();
  const { logger } = capturedLogger();
  app.use((req, _res, next) => {
    req.log = logger;
    next();
  });
  app.get(
    '/',
    limitFailedAuthentication(authentication.middleware, {
      urn,
      limit: { requests: limit, windowMs: 60_000 },
      limited: rateLimitedRequests(registry),
    }),
    (_req, res) => {
      res.status(204).end();
    },
  );
  app.use(errorHandler(urn));
  const base = await serve(app);
  const call = async (authorization?: string) => {
    const response = await fetch(base, { headers: authorization ? { authorization } : {} });
    return { status: response.status, retryAfter: response.headers.get('retry-after') };
  };
  return { call, verified: authentication.verified, registry };
}

describe('limitFailedAuthentication', () => {
  it('refuses an address with 429 and Retry-After, unverified, once it had `limit` failures', async () => {
    const { call, verified, registry } = await start(3);
    for (let i = 0; i < 3; i++) expect((await call(`bad-${i}`)).status).toBe(401);
    const refused = await call('good');
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(verified).toEqual(['bad-0', 'bad-1', 'bad-2']);
    expect(await registry.metrics()).toContain(
      'policygrant_http_rate_limited_requests_total{service="acl",class="failed-authentication"} 1',
    );
  });

  it('counts busy refusals as failures, but not successes, outages or requests without credentials', async () => {
    const { call } = await start(2);
    expect((await call('good')).status).toBe(204);
    expect((await call('outage')).status).toBe(503);
    expect((await call()).status).toBe(401);
    expect((await call('busy')).status).toBe(503);
    expect((await call('good')).status).toBe(204);
    expect((await call('bad')).status).toBe(401);
    expect((await call('bad-again')).status).toBe(429);
    expect((await call()).status).toBe(401);
  });

  it('still verifies a credential that verified within the window, but no other, once the address is refused', async () => {
    const { call, verified } = await start(2);
    expect((await call('good')).status).toBe(204);
    expect((await call('bad-0')).status).toBe(401);
    expect((await call('bad-1')).status).toBe(401);
    expect((await call('bad-2')).status).toBe(429);
    expect((await call('good')).status).toBe(204);
    expect(verified).toEqual(['good', 'bad-0', 'bad-1', 'good']);
  });
});
