import { describe, expect, it } from 'vitest';
import { untilBarrierAgrees } from '../../support/barrier-agreement.js';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import type { PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import {
  enforcedCondition,
  individual,
  untilReason,
  useControllerFixture,
} from '../controller/support/harness.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';

// The promise a user reads off kubectl: once a grant shows Enforced=True the check allows, and once it shows
// Enforced=False (revoked) the check denies, without any token, as soon as the decision service's Watch has
// delivered the change and through the revision barrier (test/support/barrier-agreement.ts). The controller
// writes SpiceDB, then the status. Real kube-apiserver, controller and SpiceDB (its default 5 s quantization
// window, so a check left to a quantized snapshot would disagree for seconds).
const fixture = useControllerFixture('enforced-status');
const ITERATIONS = 15;

/** Reads the grant as fast as the API server answers until its Enforced condition has `reason`. */
function readUntilReason(namespace: string, name: string, reason: string): Promise<PolicyGrant> {
  return untilReason(name, () => fixture.resources.getGrant(namespace, name), reason, POLL_TIMEOUT_MS, 0);
}

describe('the check agrees with the grant’s status through the revision barrier once kubectl shows it', () => {
  it(`allows once Enforced=True and denies once Enforced=False Revoked, ${ITERATIONS} times, no token`, async () => {
    const service = await startServiceUnderTest({ spicedb: fixture.spicedb.server });
    const agreement = (check: Record<string, string>) => ({
      allowed: async () => (await service.check(check)).body.result.allowed,
      metricsText: () => service.metrics.metrics(),
    });
    try {
      await untilReady(service);
      const item = await fixture.resources.createItem();
      for (let iteration = 0; iteration < ITERATIONS; iteration++) {
        const spec = individual(item.spec.itemId);
        const check = {
          subject_type: 'user',
          subject_id: spec.userId,
          resource_type: 'resource',
          resource_id: item.spec.itemId,
          relation: 'api',
        };
        const { name } = await fixture.resources.createGrant(fixture.aclNamespace, spec);
        await readUntilReason(fixture.aclNamespace, name, EnforcedReason.Projected);
        await untilBarrierAgrees({
          ...agreement(check),
          expected: true,
          what: `iteration ${iteration}: Enforced=True`,
        });

        await fixture.resources.revoke(fixture.aclNamespace, name);
        const revoked = await readUntilReason(fixture.aclNamespace, name, EnforcedReason.Revoked);
        expect(enforcedCondition(revoked)?.status).toBe('False');
        await untilBarrierAgrees({
          ...agreement(check),
          expected: false,
          what: `iteration ${iteration}: Revoked`,
        });
      }
    } finally {
      await service.stop();
    }
  });
});
