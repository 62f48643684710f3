import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { requestFromAddress } from '../../support/http-from-address.js';
import { metricValue } from '../../../src/observability/metric-text.js';
import { AclHarness, BASIC_SECRET } from './support/acl-harness.js';

// Rate limits per authenticated subject and route class, and failed authentication limited per client
// address, on a real ACL API (informers on the shared kube-apiserver).

const MINUTE = 60_000;
const READ = { requests: 3, windowMs: MINUTE };
const WRITE = { requests: 2, windowMs: MINUTE };
const FAILURES = { requests: 5, windowMs: MINUTE };
/** Loopback, but another client address than the tests' own 127.0.0.1. */
const FLOOD_ADDRESS = '127.0.0.2';

describe('rate limits per subject', () => {
  const harness = new AclHarness();
  beforeAll(() => harness.start('acl-rate-limits', { limits: { perSubject: { read: READ, write: WRITE } } }));
  afterAll(() => harness.stop());

  it('answers 429 with Retry-After and the RateLimit headers past a caller’s read limit; another caller is not limited', async () => {
    const caller = await harness.user();
    for (let i = 0; i < READ.requests; i++) {
      const answer = await harness.request('GET', '/policy/consumer', { caller });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit')).toMatch(
        new RegExp(`^"read"; r=${READ.requests - 1 - i}; t=\\d+$`),
      );
      expect(answer.headers.get('ratelimit-policy')).toMatch(/^"read"; q=3; w=60; pk=:[^:]+:$/);
    }
    const limited = await harness.request('GET', '/policy/consumer', { caller });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      type: 'urn:dx:acl:TooManyRequests',
      title: 'Too many requests',
      detail: 'rate limit exceeded: 3 requests per 60 s (read)',
    });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit')).toMatch(/^"read"; r=0; t=\d+$/);
    expect(limited.headers.get('ratelimit-policy')).toMatch(/^"read"; q=3; w=60;/);

    const other = await harness.user();
    expect((await harness.request('GET', '/policy/consumer', { caller: other })).status).toBe(200);
  });

  it('counts verify as a read and the mutations as writes, each class on its own', async () => {
    const caller = await harness.user();
    const verify = await harness.request('POST', '/verify', { caller, body: {} });
    expect(verify.status).toBe(400);
    expect(verify.headers.get('ratelimit-policy')).toMatch(/^"read"; q=3;/);
    const statuses: number[] = [];
    for (let i = 0; i <= WRITE.requests; i++) {
      const write = await harness.request('POST', '/policy', { caller, body: {} });
      expect(write.headers.get('ratelimit-policy')).toMatch(/^"write"; q=2;/);
      statuses.push(write.status);
    }
    expect(statuses).toEqual([400, 400, 429]);
    const events = await harness.request('POST', '/events', { caller, body: {} });
    expect(events.status).toBe(429);
  });

  it('never limits the operational routes, and counts what it limited', async () => {
    for (let i = 0; i < READ.requests + 2; i++) {
      for (const path of ['/healthz/live', '/metrics', '/docs']) {
        const answer = await harness.request('GET', path);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('ratelimit')).toBeNull();
      }
    }
    const metrics = (await harness.request('GET', '/metrics')).body as unknown as string;
    expect(
      metricValue(metrics, 'policygrant_http_rate_limited_requests_total{service="acl",class="read"}'),
    ).toBeGreaterThan(0);
  });
});

describe('failed authentication per client address', () => {
  const harness = new AclHarness();
  const metricsRegistry = createMetricsRegistry();
  beforeAll(() =>
    harness.start(
      'acl-auth-failures',
      { limits: { perSubject: {}, failedAuthentication: FAILURES } },
      { metricsRegistry },
    ),
  );
  afterAll(() => harness.stop());

  it('answers 429 unverified after K failures from one address, while a JWT caller from another keeps its 200s', async () => {
    const jwtCaller = await harness.user();
    const url = `${harness.api.url}/policy/consumer`;
    const waves = 8;
    const concurrency = 4;
    const flood: number[] = [];
    for (let wave = 0; wave < waves; wave++) {
      const [answers, jwt] = await Promise.all([
        Promise.all(
          Array.from({ length: concurrency }, (_, i) =>
            requestFromAddress(FLOOD_ADDRESS, url, {
              headers: { authorization: harness.basicCaller(`wrong ${wave}-${i}`).authorization },
            }),
          ),
        ),
        harness.request('GET', '/policy/consumer', { caller: jwtCaller }),
      ]);
      flood.push(...answers.map((answer) => answer.status));
      expect(jwt.status).toBe(200);
    }
    expect(flood.filter((status) => status === 401)).toHaveLength(FAILURES.requests);
    expect(flood.filter((status) => status === 429)).toHaveLength(flood.length - FAILURES.requests);

    const metrics = await metricsRegistry.metrics();
    const scryptRuns = metricValue(metrics, 'policygrant_basic_auth_verifications_total{outcome="rejected"}');
    expect(scryptRuns).toBeGreaterThanOrEqual(FAILURES.requests);
    expect(scryptRuns).toBeLessThanOrEqual(FAILURES.requests + concurrency);
    expect(
      metricValue(
        metrics,
        'policygrant_http_rate_limited_requests_total{service="acl",class="failed-authentication"}',
      ),
    ).toBe(flood.length - FAILURES.requests);
  });

  it('refuses even the right secret from that address without verifying it, but not a request without credentials', async () => {
    const before = metricValue(
      await metricsRegistry.metrics(),
      'policygrant_basic_auth_verifications_total{outcome="accepted"}',
    );
    const url = `${harness.api.url}/policy/consumer`;
    const blocked = await requestFromAddress(FLOOD_ADDRESS, url, {
      headers: { authorization: harness.basicCaller(BASIC_SECRET).authorization },
    });
    expect(blocked.status).toBe(429);
    expect(JSON.parse(blocked.body)).toMatchObject({ type: 'urn:dx:acl:TooManyRequests' });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(
      metricValue(
        await metricsRegistry.metrics(),
        'policygrant_basic_auth_verifications_total{outcome="accepted"}',
      ),
    ).toBe(before);
    expect((await requestFromAddress(FLOOD_ADDRESS, url)).status).toBe(401);
    expect((await harness.request('GET', '/policy/consumer', { caller: harness.basicCaller() })).status).toBe(
      200,
    );
  });

  it('still answers callers from a flooded shared address, seen before or not, while the flood stays refused', async () => {
    const shared = '127.0.0.3';
    const url = `${harness.api.url}/policy/consumer`;
    const jwtCaller = await harness.user();
    const basicCaller = harness.basicCaller();
    for (const caller of [jwtCaller, basicCaller])
      expect(
        (await requestFromAddress(shared, url, { headers: { authorization: caller.authorization } })).status,
      ).toBe(200);
    const flood: number[] = [];
    for (let i = 0; i < 4 * FAILURES.requests; i++) {
      const answer = await requestFromAddress(shared, url, {
        headers: {
          authorization: i % 2 ? `Bearer garbage-${i}` : harness.basicCaller(`wrong ${i}`).authorization,
        },
      });
      flood.push(answer.status);
    }
    expect(flood.filter((status) => status === 401)).toHaveLength(FAILURES.requests);
    expect(flood.filter((status) => status === 429)).toHaveLength(flood.length - FAILURES.requests);
    for (const caller of [jwtCaller, basicCaller])
      expect(
        (await requestFromAddress(shared, url, { headers: { authorization: caller.authorization } })).status,
      ).toBe(200);
    // A caller never seen before is verified and answered too: other callers' failures never refuse it.
    const newcomer = await harness.user();
    expect(
      (await requestFromAddress(shared, url, { headers: { authorization: newcomer.authorization } })).status,
    ).toBe(200);
  });
});
