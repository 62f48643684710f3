import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenReviewApi } from '../../../src/auth/token-review-verifier.js';
import type { TokenReviewApi } from '../../../src/auth/token-review-verifier.js';
import { signToken } from '../../unit/auth/support/tokens.js';
import { createTestNamespace, testKubeConfig, testSpiceDB, uniqueId } from '../support/cluster.js';
import { ISSUER, startServiceUnderTest, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';

// Real ServiceAccount tokens (TokenRequest) reviewed by the shared kube-apiserver.
const AUDIENCE = 'policy-grant-decision';
let service: DecisionServiceUnderTest;
let namespace: string;
let reviews = 0;

beforeAll(async () => {
  namespace = await createTestNamespace('decision-token-review');
  const api = tokenReviewApi(testKubeConfig());
  const countingApi: TokenReviewApi = {
    createTokenReview(param) {
      reviews++;
      return api.createTokenReview(param);
    },
  };
  service = await startServiceUnderTest({
    spicedb: testSpiceDB(),
    tokenReview: { api: countingApi, jwtIssuers: [ISSUER], audiences: [AUDIENCE] },
  });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
});

async function serviceAccountToken(audiences: string[]): Promise<string> {
  const core = testKubeConfig().makeApiClient(CoreV1Api);
  const name = uniqueId('reader');
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const request = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences, expirationSeconds: 600 } },
  });
  return request.status?.token ?? '';
}

const check = {
  subject_type: 'user',
  subject_id: 'someone',
  resource_type: 'resource',
  resource_id: 'urn:dx:item:token-review',
  relation: 'api',
};

describe('ServiceAccount callers (TokenReview)', () => {
  it('accepts a ServiceAccount token for its audience, reviewing it once while cached', async () => {
    const token = await serviceAccountToken([AUDIENCE]);
    const before = reviews;
    for (let i = 0; i < 3; i++) {
      const { status, body } = await service.check(check, { authorization: `Bearer ${token}` });
      expect(status).toBe(200);
      expect(body.result.allowed).toBe(false);
    }
    expect(reviews - before).toBe(1);
  });

  it('rejects a token for another audience, a garbage token and a forged cluster-issued JWT', async () => {
    const otherAudience = await serviceAccountToken(['https://kubernetes.default.svc.cluster.local']);
    const forged = await signToken(
      service.key,
      {},
      { issuer: 'https://kubernetes.default.svc.cluster.local' },
    );
    const before = reviews;
    for (const token of [otherAudience, 'garbage-token', forged]) {
      const { status, body } = await service.check(check, { authorization: `Bearer ${token}` });
      expect(status).toBe(401);
      expect(body.result).toEqual({ allowed: false });
    }
    expect(reviews - before).toBe(3);
  });

  it('verifies the identity provider’s JWTs without asking the API server', async () => {
    const before = reviews;
    expect((await service.check(check)).status).toBe(200);
    expect(reviews).toBe(before);
  });
});
