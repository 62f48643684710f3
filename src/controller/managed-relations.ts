import type { Registry } from '../spicedb/registry.js';
import { OWNER_RELATION } from '../verdict/projection.js';

/** One relation on one object type: the unit the resync reads SpiceDB by. */
export interface ManagedRelation {
  objectType: string;
  relation: string;
}

function itemObjectTypes(registry: Registry): string[] {
  return [
    ...new Set(registry.itemTypeNames().flatMap((itemType) => registry.objectTypeOfItemType(itemType) ?? [])),
  ];
}

/** The owner relation on each item object type: the CatalogItems'. */
export function ownerRelations(registry: Registry): ManagedRelation[] {
  return itemObjectTypes(registry).map((objectType) => ({ objectType, relation: OWNER_RELATION }));
}

/** The grant relations: on each item object type, one relation per access type. */
export function grantRelations(registry: Registry): ManagedRelation[] {
  const relations = new Set(
    registry.accessTypeNames().flatMap((accessType) => registry.relationOfAccessType(accessType) ?? []),
  );
  return itemObjectTypes(registry).flatMap((objectType) =>
    [...relations].map((relation) => ({ objectType, relation })),
  );
}

/** The owner and grant relations: what the CatalogItems and the grants are the only writers of. */
export function managedRelations(registry: Registry): ManagedRelation[] {
  return [...ownerRelations(registry), ...grantRelations(registry)];
}
