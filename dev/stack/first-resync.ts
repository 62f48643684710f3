import type { RunningController } from '../../src/controller/start-controller.js';
import { until } from '../wait/until.js';

/**
 * Waits until the controller has compared SpiceDB with the PolicyGrants once. After a restart SpiceDB (memory
 * datastore) starts empty, and this resync is what writes the grants' relationships again; a lease left by a
 * stack that was killed delays it by up to the lease duration.
 */
export async function waitForFirstResync(
  controller: Pick<RunningController, 'lastResync' | 'isLeader' | 'hasSynced'>,
  timeoutMs: number,
): Promise<void> {
  const state = () => `leading: ${controller.isLeader()}, caches synced: ${controller.hasSynced()}`;
  await until(
    () => controller.lastResync() !== undefined,
    () => new Error(`the controller did not finish its first resync within ${timeoutMs} ms (${state()})`),
    timeoutMs,
    200,
  );
}
