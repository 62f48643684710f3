import type { Logger } from '../../observability/logger.js';
import type { Relationship, RelationshipUpdate } from '../../spicedb/client.js';
import { SpiceDBError } from '../../spicedb/errors.js';
import { encodeObjectId, InvalidObjectIdError } from '../../spicedb/object-id.js';
import type { ClusterView } from '../cluster-view.js';
import type { KeyedMutex } from '../keyed-mutex.js';
import { OWNER_RELATION } from '../../verdict/projection.js';
import type { RelationshipStore } from '../relationship-store.js';
import { tupleKey } from '../../verdict/tuple-key.js';

export interface CatalogItemReconcilerOptions {
  cluster: ClusterView;
  store: RelationshipStore;
  mutex: KeyedMutex;
  /** The object types items can have (registry item types): where owner tuples of an item id may be. */
  itemObjectTypes: string[];
  logger: Logger;
  onSpiceDBError(error: SpiceDBError): void;
}

/**
 * Keeps the owner relationships of each item id equal to what its CatalogItem says: the owner user and the
 * organisation, or nothing when no CatalogItem or more than one has the id (ambiguous: deny). Works on item
 * ids, not CatalogItem names, so a renamed itemId, a deletion or a second CatalogItem all end up right.
 */
export class CatalogItemReconciler {
  /** CatalogItem name → the itemId it had when last reconciled: an edit or a delete leaves that id to clean. */
  private readonly lastItemIds = new Map<string, string>();

  constructor(private readonly options: CatalogItemReconcilerOptions) {}

  readonly reconcile = async (name: string, signal?: AbortSignal): Promise<undefined> => {
    const item = this.options.cluster.item(name);
    const itemIds = new Set([item?.spec.itemId, this.lastItemIds.get(name)].filter((id) => id !== undefined));
    try {
      for (const itemId of itemIds) await this.reconcileOwners(itemId, signal);
    } catch (error) {
      if (error instanceof SpiceDBError) this.options.onSpiceDBError(error);
      throw error;
    }
    if (item) this.lastItemIds.set(name, item.spec.itemId);
    else this.lastItemIds.delete(name);
    return undefined;
  };

  private async reconcileOwners(itemId: string, signal: AbortSignal | undefined): Promise<void> {
    const { cluster, store, mutex, itemObjectTypes } = this.options;
    let resourceId: string;
    try {
      resourceId = encodeObjectId(itemId);
    } catch (error) {
      if (!(error instanceof InvalidObjectIdError)) throw error;
      this.options.logger.warn({ itemId, err: error }, 'item id cannot be a SpiceDB object id; no owners');
      return;
    }
    await mutex.withLock(
      itemObjectTypes.map((type) => `${type}:${resourceId}`),
      async () => {
        const actual = await this.readOwners(resourceId);
        const desired = new Map(cluster.ownersOf(itemId).map((owner) => [tupleKey(owner), owner]));
        const updates: RelationshipUpdate[] = [
          ...[...desired].filter(([key]) => !actual.has(key)).map(([, relationship]) => touch(relationship)),
          ...[...actual].filter(([key]) => !desired.has(key)).map(([, relationship]) => remove(relationship)),
        ];
        if (updates.length > 0) await store.writeRelationshipsInBatches(updates, signal);
      },
    );
  }

  private async readOwners(resourceId: string): Promise<Map<string, Relationship>> {
    const owners = new Map<string, Relationship>();
    for (const resourceType of this.options.itemObjectTypes) {
      const pages = this.options.store.readRelationships(
        { resourceType, resourceId, relation: OWNER_RELATION },
        { consistency: { fullyConsistent: true } },
      );
      for await (const page of pages) {
        for (const relationship of page.relationships) owners.set(tupleKey(relationship), relationship);
      }
    }
    return owners;
  }
}

const touch = (relationship: Relationship): RelationshipUpdate => ({ operation: 'touch', relationship });
const remove = (relationship: Relationship): RelationshipUpdate => ({ operation: 'delete', relationship });
