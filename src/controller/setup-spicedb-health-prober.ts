import type { Manager } from '../runtime/index.js';
import type { SpiceDBClient } from '../spicedb/client.js';
import type { BaseDeps } from './controller-deps.js';
import type { SpiceDBHealth } from './reconcile-flow.js';
import type { FencedSpiceDB } from './fenced-spicedb.js';
import type { ResyncScheduler } from './resync-scheduler.js';
import { SpiceDBHealthProber } from './spicedb-health-prober.js';

export interface SpiceDBHealthProberParts {
  client: SpiceDBClient;
  spicedb: FencedSpiceDB;
  resync: Pick<ResyncScheduler, 'requestResync'>;
}

/**
 * The SpiceDB health prober, a runnable of every replica: probes SpiceDB, writes the schema when leading, and
 * after a recovery has every projecting kind rewrite (the fence is set again, no record of the last writes is
 * believed) and the resync run. Returns the prober, which startController starts and stops, and what the
 * reconcilers learn from it.
 */
export function setupSpiceDBHealthProber(
  manager: Manager,
  deps: Pick<BaseDeps, 'config' | 'logger' | 'projections'>,
  parts: SpiceDBHealthProberParts,
): { prober: SpiceDBHealthProber; health: SpiceDBHealth } {
  const { client, spicedb, resync } = parts;
  const prober = new SpiceDBHealthProber({
    store: client,
    ensureSchema: () => spicedb.ensureSchema(),
    isLeader: () => manager.isLeader(),
    periodMs: deps.config.spicedb.probePeriodMs,
    logger: deps.logger,
    onRecovered: () => {
      spicedb.forgetFence();
      deps.projections.rewriteAll();
      resync.requestResync();
    },
  });
  const health: SpiceDBHealth = {
    onSpiceDBError: prober.nudge,
    trustStatus: () => !prober.wasDisrupted(),
  };
  return { prober, health };
}
