import { describe, expect, it } from 'vitest';
import { EnforcedReason, RELATIONSHIPS_FINALIZER } from '../../../src/api/v1alpha1/index.js';
import { LAST_APPLIED_ANNOTATION } from '../../../src/runtime/index.js';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { TEST_TIMEOUT_MS } from '../../support/timeouts.js';
import { individual, metricValue, userCan, useControllerFixture } from './support/harness.js';

// Many grants at once, written the way kubectl apply writes them (last-applied-configuration annotation): all
// enforced, their SpiceDB writes batched (several to a WriteRelationships call), and the controller's writes from
// its stripped caches lose nothing of what others wrote.

const fixture = useControllerFixture('burst');

const BURST = 200;
const CREATORS = 16;

async function inPool(count: number, concurrency: number, work: (index: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

describe('a burst of grants', () => {
  it(
    'is all enforced, and annotations and field managers survive the finalizer and status writes',
    async () => {
      const item = await fixture.resources.createItem();
      const specs = Array.from({ length: BURST }, () => individual(item.spec.itemId));
      const names: string[] = [];
      await inPool(BURST, CREATORS, async (index) => {
        const spec = specs[index] ?? individual(item.spec.itemId);
        const annotations = { [LAST_APPLIED_ANNOTATION]: JSON.stringify({ spec }), note: `grant ${index}` };
        const created = await fixture.resources.createGrant(
          fixture.aclNamespace,
          spec,
          undefined,
          annotations,
        );
        names[index] = created.name;
      });

      // The burst queues behind itself on a loaded machine: a patient wait per grant, no bound on the whole.
      const grants = [];
      for (const name of names) {
        grants.push(
          await fixture.resources.waitForReason(
            fixture.aclNamespace,
            name,
            EnforcedReason.Projected,
            POLL_TIMEOUT_MS * 4,
          ),
        );
      }
      for (const [index, grant] of grants.entries()) {
        expect(grant.metadata.finalizers).toContain(RELATIONSHIPS_FINALIZER);
        expect(grant.metadata.annotations?.note).toBe(`grant ${index}`);
        expect(grant.metadata.annotations?.[LAST_APPLIED_ANNOTATION]).toBe(
          JSON.stringify({ spec: specs[index] }),
        );
        // The creator's field set is still there: the controller never sent the stripped managedFields back.
        const creator = grant.metadata.managedFields?.find(
          (entry) =>
            entry.operation === 'Update' &&
            !entry.subresource &&
            entry.fieldsV1 &&
            'f:spec' in entry.fieldsV1,
        );
        expect(creator?.fieldsV1).toBeDefined();
      }
      for (const spec of specs) {
        expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId)).toBe(
          true,
        );
      }
      const writes = await metricValue(fixture.controller, 'policygrant_spicedb_writes_per_call_sum');
      const calls = await metricValue(fixture.controller, 'policygrant_spicedb_writes_per_call_count');
      expect(writes).toBeGreaterThanOrEqual(BURST);
      expect(calls).toBeLessThan(writes);
    },
    3 * TEST_TIMEOUT_MS,
  );
});
