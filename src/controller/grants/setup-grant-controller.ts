import type { KubernetesObject } from '@kubernetes/client-node';
import { POLICY_GRANT_RESOURCE, type CatalogItem, type PolicyGrant } from '../../api/v1alpha1/index.js';
import { ObjectWriter } from '../../kube/object-writer.js';
import { watchesMapped, type Controller, type Informer, type Manager } from '../../runtime/index.js';
import { grantKey } from '../../verdict/grant-verdict.js';
import { candidateTupleKeys } from '../../verdict/projection.js';
import type { ClusterView } from '../cluster-view.js';
import { RELATIONSHIPS_WRITES, SHUTDOWN_TIMEOUT_MS, type ControllerDeps } from '../controller-deps.js';
import { managedRelations } from '../managed-relations.js';
import { GrantProjector } from './grant-projector.js';
import { GrantReconciler } from './grant-reconciler.js';
import { LastWrites } from './last-writes.js';

const KIND = 'policygrant';

/**
 * The PolicyGrant controller: projects each grant onto SpiceDB and writes its status. Its record of the last
 * writes belongs to the projection coordinator, which drops it when a shared tuple went or SpiceDB changed
 * behind this process.
 */
export function setupGrantController(manager: Manager, deps: ControllerDeps): Controller<PolicyGrant> {
  const { caches, config, projections, spicedbHealth, audit } = deps;
  const { world } = caches;
  const lastWrites = new LastWrites();
  projections.track(KIND, {
    keysProjecting: (key) => world.grantsWithTupleKey(key).map(grantKey),
    forget: (key) => lastWrites.forget(key),
    forgetAll: () => lastWrites.clear(),
  });
  const projector = new GrantProjector({
    store: deps.store,
    world,
    lastWrites,
    mutex: deps.mutex,
    relations: managedRelations(deps.registry),
    onTuplesDeleted: (keys, byGrantKey) => projections.recheck(KIND, keys, byGrantKey),
  });
  const reconciler = new GrantReconciler({
    world,
    projector,
    lastWrites,
    writer: new ObjectWriter<PolicyGrant>(deps.kube, POLICY_GRANT_RESOURCE, RELATIONSHIPS_WRITES),
    events: deps.events,
    metrics: deps.metrics,
    logger: deps.logger,
    ...spicedbHealth,
    ...(audit ? { beforeRelease: (grant: PolicyGrant) => audit.auditor.record(grant) } : {}),
  });
  const controller = manager.addController<PolicyGrant>({
    name: KIND,
    for: caches.grants,
    watches: grantTriggers(world, caches.grants, caches.items, caches.namespaces),
    reconcile: reconciler.reconcile,
    maxConcurrentReconciles: config.maxConcurrentReconciles,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });
  projections.bind(KIND, controller, () => world.allGrants().map(grantKey));
  return controller;
}

/** What makes a grant worth another look besides its own changes. */
function grantTriggers(
  world: ClusterView,
  grants: Informer<PolicyGrant>,
  items: Informer<CatalogItem>,
  namespaces: Informer<KubernetesObject>,
) {
  return [
    // Its CatalogItem appeared, changed (organisation, access types) or became ambiguous.
    watchesMapped(items, (item) => world.grantsOnItem(item.spec.itemId).map(grantKey)),
    // Its namespace was bound to an organisation, rebound or unbound.
    watchesMapped(namespaces, (namespace) =>
      world.grantsInNamespace(namespace.metadata?.name ?? '').map(grantKey),
    ),
    // A grant it shares a tuple with changed: a conflict may be over, or a shared tuple must stay.
    watchesMapped(grants, (grant) =>
      candidateTupleKeys(grant.spec, world.registry).flatMap((key) =>
        world.grantsWithTupleKey(key).map(grantKey),
      ),
    ),
  ];
}
