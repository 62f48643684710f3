import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { tokenReviewApi } from '../../../src/auth/token-review-verifier.js';
import { ISSUER, startServiceUnderTest, untilReady } from '../decision/support/decision-service.js';
import { createTestNamespace, testKubeConfig, testSpiceDB, uniqueId } from '../support/cluster.js';
import type { KubeTraffic } from './kube-traffic.js';
import { runSteps, type FlowOutcome } from './rbac-proof-flow.js';

// The decision service's one use of the Kubernetes API, for the RBAC proof: a caller authenticating with a
// ServiceAccount token, which the service reviews (TokenReview) as its own chart ServiceAccount.

const AUDIENCE = 'policy-grant-decision';

export const DECISION_STEP = {
  ready: 'becomes ready',
  serviceAccountCaller: 'answers a ServiceAccount caller (its token reviewed with TokenReview)',
};

const check = {
  subject_type: 'user',
  subject_id: 'someone',
  resource_type: 'resource',
  resource_id: 'urn:dx:item:rbac-proof',
  relation: 'api',
};

export class DecisionProof {
  private constructor(
    readonly namespace: string,
    /** A token of a ServiceAccount of some workload that calls the decision service. */
    private readonly callerToken: string,
    /** That ServiceAccount as `<namespace>:<name>`, listed as an enforcement point. */
    private readonly caller: string,
  ) {}

  static async prepare(): Promise<DecisionProof> {
    const namespace = await createTestNamespace('rbac-proof-decision');
    const core = testKubeConfig().makeApiClient(CoreV1Api);
    const name = uniqueId('caller');
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
    const request = await core.createNamespacedServiceAccountToken({
      name,
      namespace,
      body: { spec: { audiences: [AUDIENCE], expirationSeconds: 600 } },
    });
    return new DecisionProof(namespace, request.status?.token ?? '', `${namespace}:${name}`);
  }

  /** Starts the decision service reviewing tokens as the ServiceAccount `traffic` relays; runs its flow. */
  async run(traffic: KubeTraffic): Promise<FlowOutcome> {
    const service = await startServiceUnderTest({
      spicedb: testSpiceDB(),
      tokenReview: { api: tokenReviewApi(traffic.kubeConfig), jwtIssuers: [ISSUER], audiences: [AUDIENCE] },
      checkCallers: { roles: [], serviceAccounts: [this.caller] },
    });
    try {
      return await runSteps([
        { name: DECISION_STEP.ready, run: () => untilReady(service) },
        {
          name: DECISION_STEP.serviceAccountCaller,
          run: async () => {
            const { status, body } = await service.check(check, {
              authorization: `Bearer ${this.callerToken}`,
            });
            expect(status, `HTTP ${status}: ${body.detail ?? ''}`).toBe(200);
          },
        },
      ]);
    } finally {
      await service.stop();
    }
  }
}
