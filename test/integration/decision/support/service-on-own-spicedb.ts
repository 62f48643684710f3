import { rm } from 'node:fs/promises';
import { makeStateDir, startOwnSpiceDB } from '../../controller/support/harness.js';
import type { OwnSpiceDB } from '../../controller/support/harness.js';
import { startServiceUnderTest, untilReady } from './decision-service.js';
import type { DecisionServiceUnderTest, ServiceOptions } from './decision-service.js';

export interface ServiceOnOwnSpiceDB {
  spicedb: OwnSpiceDB;
  service: DecisionServiceUnderTest;
  /** Stops the service and the SpiceDB and removes the state folder. */
  stop(): Promise<void>;
}

/**
 * The decision service, ready, on a SpiceDB of the test file's own: every message of its Watch is then one of
 * the file's changes, so `afterWatchDelivers` waits for the file's own write.
 */
export async function startServiceOnOwnSpiceDB(
  name: string,
  options: Omit<ServiceOptions, 'spicedb'> = {},
): Promise<ServiceOnOwnSpiceDB> {
  const stateDir = await makeStateDir(`decision-${name}`);
  const spicedb = await startOwnSpiceDB(stateDir, `spicedb-${name}`);
  let service: DecisionServiceUnderTest | undefined;
  const stop = async () => {
    await service?.stop();
    await spicedb.stop();
    await rm(stateDir, { recursive: true, force: true });
  };
  try {
    service = await startServiceUnderTest({ ...options, spicedb: spicedb.server });
    await untilReady(service);
    return { spicedb, service, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A check of `api` on an item for a user. */
export function apiCheck(userId: string, itemId: string) {
  return {
    subject_type: 'user',
    subject_id: userId,
    resource_type: 'resource',
    resource_id: itemId,
    relation: 'api',
  };
}
