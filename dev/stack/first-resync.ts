import type { RunningController } from '../../src/controller/start-controller.js';
import { delay } from '../localplane/managed-process.js';

/**
 * Waits until the controller has compared SpiceDB with the PolicyGrants once. After a restart SpiceDB (memory
 * datastore) starts empty, and this resync is what writes the grants' relationships again; a lease left by a
 * stack that was killed delays it by up to the lease duration.
 */
export async function waitForFirstResync(
  controller: Pick<RunningController, 'lastResync' | 'isLeader' | 'hasSynced'>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (controller.lastResync() === undefined) {
    if (Date.now() > deadline) {
      const state = `leading: ${controller.isLeader()}, caches synced: ${controller.hasSynced()}`;
      throw new Error(`the controller did not finish its first resync within ${timeoutMs} ms (${state})`);
    }
    await delay(200);
  }
}
