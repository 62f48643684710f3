import type { Registry } from '../spicedb/registry.js';
import { OWNER_RELATION } from '../verdict/projection.js';

/** One relation on one object type: the unit the resync reads SpiceDB by. */
export interface ManagedRelation {
  objectType: string;
  relation: string;
}

/**
 * The grant and owner relations: on each item object type, the owner relation and
 * one relation per access type.
 */
export function managedRelations(registry: Registry): ManagedRelation[] {
  const objectTypes = new Set(
    registry.itemTypeNames().flatMap((itemType) => registry.objectTypeOfItemType(itemType) ?? []),
  );
  const relations = new Set([
    OWNER_RELATION,
    ...registry.accessTypeNames().flatMap((accessType) => registry.relationOfAccessType(accessType) ?? []),
  ]);
  return [...objectTypes].flatMap((objectType) =>
    [...relations].map((relation) => ({ objectType, relation })),
  );
}
