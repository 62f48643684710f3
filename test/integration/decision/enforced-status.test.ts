import { describe, expect, it } from 'vitest';
import { PATIENCE_MS } from '../../support/patience.js';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import type { PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import { enforcedCondition, individual, useControllerFixture } from '../controller/support/harness.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';

// The promise a user reads off kubectl: the moment a grant shows Enforced=True the check allows, and the moment
// it shows Enforced=False (revoked) the check denies, without any token. The controller writes SpiceDB, then
// the status; the decision service learns of the write from its Watch. Real kube-apiserver, controller and
// SpiceDB (its default 5 s quantization window).
const world = useControllerFixture('enforced-status');
const ITERATIONS = 15;

/** Reads the grant as fast as the API server answers until its Enforced condition has `reason`. */
async function readUntilReason(namespace: string, name: string, reason: string): Promise<PolicyGrant> {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const grant = await world.resources.getGrant(namespace, name);
    const condition = enforcedCondition(grant);
    if (condition?.reason === reason && condition.observedGeneration === grant.metadata.generation)
      return grant;
    if (Date.now() > deadline)
      throw new Error(`${name}: Enforced is ${JSON.stringify(condition)}, not ${reason}`);
  }
}

describe('the check agrees with the grant’s status from the moment kubectl shows it', () => {
  it(`allows once Enforced=True and denies once Enforced=False Revoked, ${ITERATIONS} times, no token`, async () => {
    const service = await startServiceUnderTest({ spicedb: world.spicedb.server });
    try {
      await untilReady(service);
      const item = await world.resources.createItem();
      for (let iteration = 0; iteration < ITERATIONS; iteration++) {
        const spec = individual(item.spec.itemId);
        const check = {
          subject_type: 'user',
          subject_id: spec.userId,
          resource_type: 'resource',
          resource_id: item.spec.itemId,
          relation: 'api',
        };
        const { name } = await world.resources.createGrant(world.aclNamespace, spec);
        await readUntilReason(world.aclNamespace, name, EnforcedReason.Projected);
        const granted = await service.check(check);
        expect(granted.body.result.allowed, `iteration ${iteration}: Enforced=True but denied`).toBe(true);

        await world.resources.revoke(world.aclNamespace, name);
        const revoked = await readUntilReason(world.aclNamespace, name, EnforcedReason.Revoked);
        expect(enforcedCondition(revoked)?.status).toBe('False');
        const denied = await service.check(check);
        expect(denied.body.result.allowed, `iteration ${iteration}: Enforced=False but allowed`).toBe(false);
      }
    } finally {
      await service.stop();
    }
  });
});
