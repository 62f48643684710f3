import type { ClusterView } from '../cluster-view.js';
import { ownerRelations } from '../managed-relations.js';
import type { ResyncedKind } from '../projected/projected-kind.js';

/** The owner relationships of the CatalogItems, as the resync compares them: one item id at a time. */
export function itemOwners(cluster: ClusterView): ResyncedKind {
  return {
    relations: ownerRelations(cluster.registry),
    *wanted() {
      for (const itemId of new Set(cluster.allItems().map((item) => item.spec.itemId))) {
        yield cluster.ownersOf(itemId);
      }
    },
    accounting: (now) => cluster.accounting(now),
  };
}
