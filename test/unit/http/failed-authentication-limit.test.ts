import express from 'express';
import type { RequestHandler } from 'express';
import { describe, expect, it } from 'vitest';
import { busy, dependencyUnavailable, HttpError } from '../../../src/http/errors.js';
import { errorHandler } from '../../../src/http/error-handler.js';
import { limitFailedAuthentication } from '../../../src/http/rate-limit/failed-authentication-limit.js';
import { rateLimitedRequests } from '../../../src/http/rate-limit/rate-limit-metrics.js';
import { createUrnScheme } from '../../../src/http/urn.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { requestFromAddress } from '../../support/http-from-address.js';
import { capturedLogger, serve } from './support/serve.js';

const urn = createUrnScheme('acl');

/** A stand-in for authenticate(): the Authorization header says how it ends; counts what it verified. */
function fakeAuthentication() {
  const verified: string[] = [];
  const middleware: RequestHandler = async (req, _res, next) => {
    const header = req.get('authorization') ?? '';
    verified.push(header);
    if (header === 'good' || header === basic('app', 'good')) return next();
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
  const call = async (authorization?: string, address = '127.0.0.1') => {
    const response = await requestFromAddress(address, base, {
      headers: authorization ? { authorization } : {},
    });
    return { status: response.status, retryAfter: response.headers['retry-after'] };
  };
  return { call, verified: authentication.verified, registry };
}

describe('limitFailedAuthentication', () => {
  it('answers a failure from an address past `limit` failures 429 with Retry-After, but verifies a valid credential', async () => {
    const { call, verified, registry } = await start(3);
    for (let i = 0; i < 3; i++) expect((await call(`bad-${i}`)).status).toBe(401);
    const refused = await call('bad-3');
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect((await call('good')).status).toBe(204);
    expect(verified).toEqual(['bad-0', 'bad-1', 'bad-2', 'bad-3', 'good']);
    expect(await registry.metrics()).toContain(
      'policygrant_http_rate_limited_requests_total{service="acl",class="failed-authentication"} 1',
    );
  });

  it('refuses a claimed identity past `limit` failures from one address unverified; verifies other identities and addresses', async () => {
    const { call, verified } = await start(2);
    const wrong = basic('app', 'wrong');
    for (let i = 0; i < 2; i++) expect((await call(wrong)).status).toBe(401);
    expect((await call(basic('app', 'good'))).status).toBe(429);
    // The address is past its limit too: another identity is verified, and its failure answered 429.
    expect((await call(basic('other-app', 'secret'))).status).toBe(429);
    expect((await call(basic('app', 'good'), '127.0.0.2')).status).toBe(204);
    expect(verified).toEqual([wrong, wrong, basic('other-app', 'secret'), basic('app', 'good')]);
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

  it('still verifies a credential that verified within the window when its claimed identity is refused', async () => {
    const { call, verified } = await start(2);
    const good = basic('app', 'good');
    expect((await call(good)).status).toBe(204);
    for (let i = 0; i < 2; i++) expect((await call(basic('app', `bad-${i}`))).status).toBe(401);
    expect((await call(basic('app', 'bad-2'))).status).toBe(429);
    expect((await call(good)).status).toBe(204);
    expect(verified).toEqual([good, basic('app', 'bad-0'), basic('app', 'bad-1'), good]);
  });
});

function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
}
