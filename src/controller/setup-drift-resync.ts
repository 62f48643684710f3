import type { Manager } from '../runtime/index.js';
import type { Registry } from '../spicedb/registry.js';
import type { BaseDeps } from './controller-deps.js';
import { delegationRelations } from './delegations/delegation-projection.js';
import { DriftResync } from './drift-resync.js';
import { managedRelations, type ManagedRelation } from './managed-relations.js';
import { MEMBERSHIP_RELATIONS } from './memberships/membership-projection.js';
import { ResyncScheduler } from './resync-scheduler.js';

/**
 * Every relation the controller is the only writer of: those of grants and CatalogItems, the members and
 * owners of organisations and groups, and the delegations and agent ownerships. The resync reads exactly these
 * and deletes what no resource accounts for.
 */
export function resyncedRelations(registry: Registry): ManagedRelation[] {
  return [...managedRelations(registry), ...MEMBERSHIP_RELATIONS, ...delegationRelations(registry)];
}

/**
 * The drift resync, a runnable of the leader: compares SpiceDB with every projected kind when a term begins,
 * every period and on request. Orphans it deletes make every kind check again; a new term forgets every
 * record of the last writes. Returns the scheduler, which startController starts and stops.
 */
export function setupDriftResync(manager: Manager, deps: BaseDeps): ResyncScheduler {
  const { caches, projections, metrics, logger } = deps;
  const resync = new DriftResync({
    store: deps.store,
    world: caches.world,
    projected: [caches.memberships, caches.delegations],
    relations: resyncedRelations(deps.registry),
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
