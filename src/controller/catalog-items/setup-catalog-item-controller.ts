import type { CatalogItem } from '../../api/v1alpha1/index.js';
import type { Controller, Manager } from '../../runtime/index.js';
import { SHUTDOWN_TIMEOUT_MS, type ControllerDeps } from '../controller-deps.js';
import { ownerRelations } from '../managed-relations.js';
import { CatalogItemReconciler } from './catalog-item-reconciler.js';

const KIND = 'catalogitem';

/** The CatalogItem controller: keeps the owner relationships of each item id; rewrites them after a SpiceDB recovery. */
export function setupCatalogItemController(manager: Manager, deps: ControllerDeps): Controller<CatalogItem> {
  const { cluster, items } = deps.caches;
  const reconciler = new CatalogItemReconciler({
    cluster,
    store: deps.store,
    mutex: deps.mutex,
    itemObjectTypes: ownerRelations(deps.registry).map((relation) => relation.objectType),
    logger: deps.logger,
    onSpiceDBError: deps.spicedbHealth.onSpiceDBError,
  });
  const controller = manager.addController<CatalogItem>({
    name: KIND,
    for: items,
    reconcile: reconciler.reconcile,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });
  deps.projections.bind(KIND, controller, () => cluster.allItems().map((item) => item.metadata.name ?? ''));
  return controller;
}
