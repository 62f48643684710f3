import { describe, expect, it } from 'vitest';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import {
  enforcedCondition,
  individual,
  metricValue,
  userCan,
  useControllerFixture,
} from './support/harness.js';

// SpiceDB (the test's own, memory datastore) goes away and comes back empty: the controller reports
// ProjectionFailed and retries, then notices the empty SpiceDB, writes the schema again and restores every
// tuple, old and new.

// A long resync period: recovery must come from noticing the outage, not from the next periodic resync.
const fixture = useControllerFixture('outage', { RESYNC_PERIOD: '10m' });

const failedProjections = () => metricValue(fixture.controller, 'policygrant_projection_failed_grants');
const reconcileErrors = () =>
  metricValue(fixture.controller, 'controller_runtime_reconcile_errors_total', { controller: 'policygrant' });

describe('a SpiceDB outage', () => {
  it('fails projections visibly while SpiceDB is down, and converges once it is back, empty', async () => {
    const item = await fixture.resources.createItem();
    const before = individual(item.spec.itemId);
    const earlier = await fixture.resources.createGrant(fixture.aclNamespace, before);
    await fixture.resources.waitForReason(fixture.aclNamespace, earlier.name, EnforcedReason.Projected);

    await fixture.spicedb.server.process.stop();
    const during = individual(item.spec.itemId, ['file']);
    const { name } = await fixture.resources.createGrant(fixture.aclNamespace, during);
    const failed = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      name,
      EnforcedReason.ProjectionFailed,
    );
    expect(enforcedCondition(failed)?.message).toMatch(/SpiceDB WriteRelationships failed/);
    // The gauge is read from the controller's cache, which sees its own status write a moment after the API.
    await expect.poll(failedProjections).toBe(1);
    const ready = await fetch(`${fixture.controller.url}/healthz/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ detail: expect.stringContaining('spicedb') });
    const retries = await reconcileErrors();
    await expect.poll(reconcileErrors).toBeGreaterThan(retries);

    await fixture.spicedb.restart();
    const enforced = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      name,
      EnforcedReason.Projected,
    );
    expect(
      await userCan(fixture.spicedb.client, item.spec.itemId, 'file_consumer', during.userId, enforced),
    ).toBe(true);
    // The grant enforced before the outage: its tuple went with the old SpiceDB and is written again.
    await expect
      .poll(() => userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', before.userId))
      .toBe(true);
    // And so are the owner relationships.
    await expect
      .poll(() => userCan(fixture.spicedb.client, item.spec.itemId, 'owner', item.spec.ownerId))
      .toBe(true);
    await expect.poll(failedProjections).toBe(0);
    await expect.poll(async () => (await fetch(`${fixture.controller.url}/healthz/ready`)).status).toBe(200);
  });
});
