import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { signToken, testKey } from '../../unit/auth/support/tokens.js';
import { requestFromAddress } from '../../support/http-from-address.js';
import { metricValue } from '../../../src/observability/metric-text.js';
import { testSpiceDB } from '../support/cluster.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';

// The check's per-subject rate limit and failed authentication per client address, on a real decision
// service (SpiceDB of the shared control plane).

const MINUTE = 60_000;
const CHECK = { requests: 3, windowMs: MINUTE };
const FAILURES = { requests: 5, windowMs: MINUTE };
/** Loopback, but another client address than the tests' own 127.0.0.1. */
const FLOOD_ADDRESS = '127.0.0.2';
const check = {
  subject_type: 'user',
  subject_id: 'someone',
  resource_type: 'resource',
  resource_id: 'urn:dx:item:rate-limits',
  relation: 'api',
};

let limitedService: DecisionServiceUnderTest;
let authFailureLimitedService: DecisionServiceUnderTest;

beforeAll(async () => {
  [limitedService, authFailureLimitedService] = await Promise.all([
    startServiceUnderTest({ spicedb: testSpiceDB(), limits: { perSubject: { check: CHECK } } }),
    startServiceUnderTest({
      spicedb: testSpiceDB(),
      limits: { perSubject: {}, failedAuthentication: FAILURES },
    }),
  ]);
  await Promise.all([untilReady(limitedService), untilReady(authFailureLimitedService)]);
});

afterAll(async () => {
  await Promise.all([limitedService?.stop(), authFailureLimitedService?.stop()]);
});

async function postCheck(service: DecisionServiceUnderTest, authorization: string) {
  const response = await fetch(`${service.url}/v1/check`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(check),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as unknown };
}

describe('the check’s rate limit per subject', () => {
  it('answers 429 denying, with Retry-After and the RateLimit headers; another subject is not limited', async () => {
    const service = limitedService;
    for (let i = 0; i < CHECK.requests; i++) {
      const answer = await postCheck(service, service.authorization);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit')).toMatch(
        new RegExp(`^"check"; r=${CHECK.requests - 1 - i}; t=\\d+$`),
      );
      expect(answer.headers.get('ratelimit-policy')).toMatch(/^"check"; q=3; w=60; pk=:[^:]+:$/);
    }
    const limited = await postCheck(service, service.authorization);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      type: 'urn:dx:authz:TooManyRequests',
      title: 'Too many requests',
      detail: 'rate limit exceeded: 3 requests per 60 s (check)',
      result: { allowed: false },
    });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit')).toMatch(/^"check"; r=0; t=\d+$/);
    expect(limited.headers.get('ratelimit-policy')).toMatch(/^"check"; q=3; w=60;/);

    const otherSubject = await signToken(
      service.key,
      { roles: [DECISION_CLIENT_ROLE] },
      { subject: randomUUID() },
    );
    expect((await postCheck(service, `Bearer ${otherSubject}`)).status).toBe(200);
  });

  it('never limits the operational routes, and counts what it limited', async () => {
    const service = limitedService;
    for (let i = 0; i < CHECK.requests + 2; i++) {
      for (const path of ['/healthz/live', '/metrics', '/docs']) {
        const answer = await fetch(`${service.url}${path}`);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('ratelimit')).toBeNull();
      }
    }
    const metrics = await service.metrics.metrics();
    expect(
      metricValue(metrics, 'policygrant_http_rate_limited_requests_total{service="authz",class="check"}'),
    ).toBeGreaterThan(0);
  });
});

describe('failed authentication per client address', () => {
  it('answers bad tokens 429 after K from one address; valid callers are still answered, even from there', async () => {
    const service = authFailureLimitedService;
    const forger = await testKey('ES256', 'forger');
    const statuses: number[] = [];
    for (let i = 0; i < FAILURES.requests + 5; i++) {
      const forged = await signToken(forger, {}, { subject: randomUUID() });
      const answer = await requestFromAddress(FLOOD_ADDRESS, `${service.url}/v1/check`, {
        method: 'POST',
        headers: { authorization: `Bearer ${forged}`, 'content-type': 'application/json' },
      });
      statuses.push(answer.status);
      expect((await postCheck(service, service.authorization)).status).toBe(200);
    }
    expect(statuses).toEqual([...Array(FAILURES.requests).fill(401), ...Array(5).fill(429)]);
    // Behind a gateway every caller shares the flood's address: a credential that verified is never locked out.
    const answered = await requestFromAddress(FLOOD_ADDRESS, `${service.url}/v1/check`, {
      method: 'POST',
      headers: { authorization: service.authorization, 'content-type': 'application/json' },
      body: JSON.stringify(check),
    });
    expect(answered.status).toBe(200);
    // One this replica has not seen verify is verified and answered too; the flood's next token is refused.
    const unseen = await signToken(service.key, { roles: [DECISION_CLIENT_ROLE] }, { subject: randomUUID() });
    const unseenAnswer = await requestFromAddress(FLOOD_ADDRESS, `${service.url}/v1/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${unseen}`, 'content-type': 'application/json' },
      body: JSON.stringify(check),
    });
    expect(unseenAnswer.status).toBe(200);
    const forged = await signToken(forger, {}, { subject: randomUUID() });
    const blocked = await requestFromAddress(FLOOD_ADDRESS, `${service.url}/v1/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${forged}`, 'content-type': 'application/json' },
    });
    expect(blocked.status).toBe(429);
    expect(JSON.parse(blocked.body)).toMatchObject({
      type: 'urn:dx:authz:TooManyRequests',
      result: { allowed: false },
    });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
  });
});
