import { readFileSync } from 'node:fs';
import { CORE_SCHEMA, load } from 'js-yaml';
import { REGISTRY_FILE, type Registry } from '../spicedb/registry.js';
import { OWNER_RELATION } from '../verdict/projection.js';

/** One relation on one object type: the unit the resync reads SpiceDB by. */
export interface ManagedRelation {
  objectType: string;
  relation: string;
}

interface RegistryNames {
  itemTypes: string[];
  accessTypes: string[];
}

/**
 * The item types and access types the registry names. Registry answers lookups but cannot list its
 * entries, so the names come from the registry file itself; each is then resolved through Registry,
 * which has validated the file against the schema.
 */
export function registryNames(registryYaml: string = readFileSync(REGISTRY_FILE, 'utf8')): RegistryNames {
  const document = load(registryYaml, { schema: CORE_SCHEMA }) as {
    itemTypes?: Record<string, unknown>;
    accessTypes?: Record<string, unknown>;
  };
  return {
    itemTypes: Object.keys(document.itemTypes ?? {}),
    accessTypes: Object.keys(document.accessTypes ?? {}),
  };
}

/**
 * The grant and owner relations: on each item object type, the owner relation and
 * one relation per access type.
 */
export function managedRelations(
  registry: Registry,
  names: RegistryNames = registryNames(),
): ManagedRelation[] {
  const objectTypes = new Set(
    names.itemTypes.flatMap((itemType) => registry.objectTypeOfItemType(itemType) ?? []),
  );
  const relations = new Set([
    OWNER_RELATION,
    ...names.accessTypes.flatMap((accessType) => registry.relationOfAccessType(accessType) ?? []),
  ]);
  return [...objectTypes].flatMap((objectType) =>
    [...relations].map((relation) => ({ objectType, relation })),
  );
}
