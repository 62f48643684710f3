import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBasicVerifier } from '../../../src/auth/basic-verifier.js';
import { DEFAULT_SCRYPT_PARAMETERS, hashSecret } from '../../../src/auth/secret-hash.js';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { DEFAULT_TOKEN_REVIEW_AUDIENCE } from '../../../src/decision/decision-service.js';
import { metricValue } from '../../../src/observability/metric-text.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { FAST } from '../../unit/auth/support/fast-scrypt.js';
import { signToken, testKey } from '../../unit/auth/support/tokens.js';
import { requestFromAddress } from '../../support/http-from-address.js';
import { createTestNamespace, testSpiceDB } from '../support/cluster.js';
import { ISSUER, startServiceUnderTest, unknownUserCheck, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';
import {
  countingTokenReviewApi,
  createServiceAccount,
  serviceAccountToken,
} from './support/service-accounts.js';

// Every caller behind one address (a gateway, a mesh sidecar) while an attacker floods bad credentials from
// it: the decision service with JWTs, Basic applications (scrypt) and ServiceAccount tokens reviewed by the
// shared kube-apiserver. A valid credential never seen before is answered; the flood stays refused and cheap.

const FAILURES = { requests: 5, windowMs: 60_000 };
/** The shared address: loopback, but not the test's own 127.0.0.1. */
const SHARED = '127.0.0.4';
const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const ENFORCER = 'enforcer';
const SECRET = 'application-secret';
const check = unknownUserCheck('urn:dx:item:authentication-flood');
const basicMetrics = createMetricsRegistry();
let service: DecisionServiceUnderTest;
let namespace: string;
const tokenReviews = countingTokenReviewApi();

beforeAll(async () => {
  namespace = await createTestNamespace('decision-authentication-flood');
  await createServiceAccount(namespace, ENFORCER);
  const hash = await hashSecret(SECRET, FAST);
  service = await startServiceUnderTest({
    spicedb: testSpiceDB(),
    basic: createBasicVerifier(
      ['gateway', 'fresh-app'].map((clientId) => ({ clientId, hash, roles: [DECISION_CLIENT_ROLE] })),
      { metricsRegistry: basicMetrics },
    ),
    tokenReview: { api: tokenReviews.api, jwtIssuers: [ISSUER] },
    checkCallers: { roles: [DECISION_CLIENT_ROLE], serviceAccounts: [`${namespace}:${ENFORCER}`] },
    limits: { perSubject: {}, failedAuthentication: FAILURES },
  });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
});

const basic = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;

async function checkFromShared(authorization: string): Promise<number> {
  const answer = await requestFromAddress(SHARED, `${service.url}/v1/check`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(check),
  });
  return answer.status;
}

/** Bad credentials of every kind: forged JWTs, wrong secrets of a known client id, one forged cluster token. */
async function badCredentials(count: number): Promise<string[]> {
  const forger = await testKey('ES256', 'forger');
  const forgedClusterToken = await signToken(forger, {}, { issuer: SERVICE_ACCOUNT_ISSUER });
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      if (i % 3 === 0) return `Bearer ${await signToken(forger, {}, { subject: randomUUID() })}`;
      if (i % 3 === 1) return basic('gateway', `wrong-${i}`);
      return `Bearer ${forgedClusterToken}`;
    }),
  );
}

const scryptRejections = async () =>
  metricValue(await basicMetrics.metrics(), 'policygrant_basic_auth_verifications_total{outcome="rejected"}');

describe('a flood of bad credentials from an address every caller shares', () => {
  it('answers valid credentials never seen before with 200, and bad ones 429 at a bounded cost', async () => {
    const flood: number[] = [];
    for (const authorization of await badCredentials(6 * FAILURES.requests))
      flood.push(await checkFromShared(authorization));
    expect(flood).toEqual([
      ...Array<number>(FAILURES.requests).fill(401),
      ...Array<number>(5 * FAILURES.requests).fill(429),
    ]);

    // (a) a JWT, (b) a Basic application and (c) a ServiceAccount token, none seen before by this replica.
    const freshJwt = await signToken(
      service.key,
      { roles: [DECISION_CLIENT_ROLE] },
      { subject: randomUUID() },
    );
    expect.soft(await checkFromShared(`Bearer ${freshJwt}`)).toBe(200);
    expect.soft(await checkFromShared(basic('fresh-app', SECRET))).toBe(200);
    const serviceAccount = await serviceAccountToken(namespace, ENFORCER, [DEFAULT_TOKEN_REVIEW_AUDIENCE]);
    expect.soft(await checkFromShared(`Bearer ${serviceAccount}`)).toBe(200);

    // (d) the flood goes on refused; scrypt ran for at most the limit of the guessed client id, and the one
    // forged cluster token was reviewed at most the limit times (the rejection cache makes it once).
    const reviewsBefore = tokenReviews.reviews();
    for (const authorization of await badCredentials(3 * FAILURES.requests))
      expect(await checkFromShared(authorization)).toBe(429);
    expect(await scryptRejections()).toBe(FAILURES.requests);
    expect(tokenReviews.reviews()).toBeLessThanOrEqual(FAILURES.requests);
    expect(tokenReviews.reviews() - reviewsBefore).toBe(1);
  });

  it('locks a guessed client id out from the flooding address only, not its holder from elsewhere', async () => {
    expect(await checkFromShared(basic('gateway', SECRET))).toBe(429);
    const elsewhere = await service.check(check, { authorization: basic('gateway', SECRET) });
    expect(elsewhere.status).toBe(200);
  });
});

// One address floods made-up client ids, each new to the limits, with real scrypt: they cannot keep the scrypt
// queue full for a valid application calling from elsewhere.
describe('a flood of made-up Basic client ids from one address', () => {
  const FLOODER = '127.0.0.5';
  const CALLER = '127.0.0.6';
  const IN_FLIGHT = 40;
  /** A guard against a hang only: the flood stops once the valid calls are answered. */
  const MOST_PER_WORKER = 2_000;
  const VALID_CALLS = 5;
  let flooded: DecisionServiceUnderTest;

  beforeAll(async () => {
    const hash = await hashSecret(SECRET, DEFAULT_SCRYPT_PARAMETERS);
    // Each valid call is a different application, so none of them has verified recently.
    const applications = Array.from({ length: VALID_CALLS }, (_, i) => `enforcer-${i}`);
    flooded = await startServiceUnderTest({
      spicedb: testSpiceDB(),
      basic: createBasicVerifier(
        applications.map((clientId) => ({ clientId, hash, roles: [DECISION_CLIENT_ROLE] })),
      ),
      limits: { perSubject: {}, failedAuthentication: { requests: 20, windowMs: 60_000 } },
    });
    await untilReady(flooded);
  });

  afterAll(async () => {
    await flooded?.stop();
  });

  const checkFrom = async (address: string, authorization: string) =>
    (
      await requestFromAddress(address, `${flooded.url}/v1/check`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify(check),
      })
    ).status;

  it('answers a valid application that has not verified recently 200 every time', async () => {
    let flooding = true;
    const floodAnswers: number[] = [];
    const worker = async () => {
      for (let i = 0; flooding && i < MOST_PER_WORKER; i++) {
        floodAnswers.push(await checkFrom(FLOODER, basic(`made-up-${randomUUID()}`, 'guess')));
      }
    };
    const flood = Array.from({ length: IN_FLIGHT }, worker);
    try {
      // The flood holds all the places it can: some of its attempts were refused busy.
      await expect.poll(() => floodAnswers.includes(503)).toBe(true);
      const valid: number[] = [];
      for (let i = 0; i < VALID_CALLS; i++)
        valid.push(await checkFrom(CALLER, basic(`enforcer-${i}`, SECRET)));
      expect(valid).toEqual(Array<number>(VALID_CALLS).fill(200));
    } finally {
      flooding = false;
      await Promise.all(flood);
    }
    expect(floodAnswers).not.toContain(200);
  });
});
