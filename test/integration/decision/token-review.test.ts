import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHECK_CALLERS } from '../../../src/decision/check-callers.js';
import { signToken } from '../../unit/auth/support/tokens.js';
import { createTestNamespace, testSpiceDB } from '../support/cluster.js';
import { ISSUER, startServiceUnderTest, unknownUserCheck, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';
import {
  countingTokenReviewApi,
  createServiceAccount,
  serviceAccountToken,
} from './support/service-accounts.js';

// Real ServiceAccount tokens (TokenRequest) reviewed by the shared kube-apiserver.
const AUDIENCE = 'policy-grant-decision';
const READER = 'reader';
let service: DecisionServiceUnderTest;
let namespace: string;
const tokenReviews = countingTokenReviewApi();
const reviews = () => tokenReviews.reviews();

beforeAll(async () => {
  namespace = await createTestNamespace('decision-token-review');
  await createServiceAccount(namespace, READER);
  service = await startServiceUnderTest({
    spicedb: testSpiceDB(),
    tokenReview: { api: tokenReviews.api, jwtIssuers: [ISSUER], audiences: [AUDIENCE] },
    checkCallers: { ...DEFAULT_CHECK_CALLERS, serviceAccounts: [`${namespace}:${READER}`] },
  });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
});

const check = unknownUserCheck('urn:dx:item:token-review');

describe('ServiceAccount callers (TokenReview)', () => {
  it('accepts a ServiceAccount token for its audience, reviewing it once while cached', async () => {
    const token = await serviceAccountToken(namespace, READER, [AUDIENCE]);
    const before = reviews();
    for (let i = 0; i < 3; i++) {
      const { status, body } = await service.check(check, { authorization: `Bearer ${token}` });
      expect(status).toBe(200);
      expect(body.result.allowed).toBe(false);
    }
    expect(reviews() - before).toBe(1);
  });

  it('rejects a token for another audience, a garbage token and a forged cluster-issued JWT, reviewing the JWTs', async () => {
    const otherAudience = await serviceAccountToken(namespace, READER, [
      'https://kubernetes.default.svc.cluster.local',
    ]);
    const forged = await signToken(
      service.key,
      {},
      { issuer: 'https://kubernetes.default.svc.cluster.local' },
    );
    const before = reviews();
    for (const token of [otherAudience, 'garbage-token', forged]) {
      const { status, body } = await service.check(check, { authorization: `Bearer ${token}` });
      expect(status).toBe(401);
      expect(body.result).toEqual({ allowed: false });
    }
    // The garbage token names no issuer: refused without a TokenReview.
    expect(reviews() - before).toBe(2);
  });

  it('refuses distinct tokens of foreign issuers without a single TokenReview', async () => {
    const before = reviews();
    for (let i = 0; i < 20; i++) {
      const foreign = await signToken(service.key, {}, { issuer: `https://issuer-${randomUUID()}.example` });
      const { status, body } = await service.check(check, { authorization: `Bearer ${foreign}` });
      expect(status).toBe(401);
      expect(body.result).toEqual({ allowed: false });
    }
    expect(reviews()).toBe(before);
  });

  it('verifies the identity provider’s JWTs without asking the API server', async () => {
    const before = reviews();
    expect((await service.check(check)).status).toBe(200);
    expect(reviews()).toBe(before);
  });
});
