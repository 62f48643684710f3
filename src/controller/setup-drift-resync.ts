import type { Manager } from '../runtime/index.js';
import { itemOwners } from './catalog-items/item-owners.js';
import type { BaseDeps } from './controller-deps.js';
import { DriftResync } from './drift-resync.js';
import { GrantKind } from './grants/grant-kind.js';
import type { ResyncedKind } from './projected/projected-kind.js';
import { ResyncScheduler } from './resync-scheduler.js';

/**
 * Every kind the controller is the only writer of the relations of: grants, CatalogItems (owners),
 * Memberships (members and owners of organisations and groups), Delegations (delegations and agent
 * ownerships). The resync reads exactly their relations and deletes what none of them accounts for.
 */
export function resyncedKinds(
  deps: Pick<BaseDeps, 'caches' | 'events' | 'metrics' | 'logger'>,
): ResyncedKind[] {
  const { caches } = deps;
  return [
    new GrantKind({ ...deps, cluster: caches.cluster }),
    itemOwners(caches.cluster),
    caches.memberships,
    caches.delegations,
  ];
}

/**
 * The drift resync, a runnable of the leader: compares SpiceDB with every projected kind when a term begins,
 * every period and on request. Orphans it deletes make every kind check again; a new term forgets every
 * record of the last writes. Returns the scheduler, which startController starts and stops.
 */
export function setupDriftResync(manager: Manager, deps: BaseDeps): ResyncScheduler {
  const { projections, metrics, logger } = deps;
  const resync = new DriftResync({
    store: deps.store,
    kinds: resyncedKinds(deps),
    mutex: deps.mutex,
    metrics,
    logger,
    onTuplesDeleted: (keys) => projections.recheckAll(keys),
  });
  return new ResyncScheduler({
    resync,
    periodMs: deps.config.resyncPeriodMs,
    isLeader: () => manager.isLeader(),
    hasSynced: () => manager.leadsWithFreshCaches(),
    // Another leader may have written and deleted since this replica last led.
    onStartedLeading: () => projections.forgetAll(),
    metrics,
    logger,
  });
}
