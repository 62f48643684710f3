import { readFileSync } from 'node:fs';
import { CORE_SCHEMA, load } from 'js-yaml';
import { z } from 'zod';
import { parseSchemaShape, readSchemaText, type SchemaShape } from './schema.js';

export const REGISTRY_FILE = new URL('./registry.yaml', import.meta.url);

const spicedbName = z.string().regex(/^[a-z][a-z0-9_]*$/, 'a SpiceDB name: lowercase letters, digits and _');
const publicName = z.string().min(1);

const registryDocument = z.strictObject({
  itemTypes: z.record(publicName, spicedbName),
  accessTypes: z.record(publicName, spicedbName),
  policyTypes: z.record(
    publicName,
    z.strictObject({ subjectType: spicedbName, subjectRelation: spicedbName.optional() }),
  ),
  delegationRelations: z.record(publicName, spicedbName),
  check: z.strictObject({
    resourceTypes: z.record(
      publicName,
      z.strictObject({
        objectType: spicedbName,
        aliases: z.array(publicName).default([]),
        relations: z.record(publicName, spicedbName),
      }),
    ),
    subjectTypes: z.record(
      publicName,
      z.strictObject({
        objectType: spicedbName,
        relation: spicedbName.optional(),
        scopedByOrganisation: z.boolean().default(false),
      }),
    ),
  }),
});

type RegistryDocument = z.infer<typeof registryDocument>;
type ResourceTypeEntry = RegistryDocument['check']['resourceTypes'][string];
type SubjectTypeEntry = RegistryDocument['check']['subjectTypes'][string];

/** The registry file is invalid or names something schema.zed does not define. */
export class RegistryError extends Error {
  override readonly name = 'RegistryError';
}

/** A subject type of the check: the SpiceDB subject it stands for. */
export interface CheckSubjectType {
  objectType: string;
  /** e.g. `member` for organization#member; absent for a plain object. */
  relation?: string | undefined;
  /** Its ids are unique within an organisation only (`group`): a check names the organisation too. */
  scopedByOrganisation: boolean;
}

/** A resource type of the check under its canonical name, whatever name (or alias) found it. */
export interface CheckResourceType {
  name: string;
  objectType: string;
  /** Public relation names → SpiceDB relations or permissions, in the registry's order. */
  relations: Readonly<Record<string, string>>;
}

export interface GrantSubjectType {
  subjectType: string;
  subjectRelation?: string;
}

function entriesOf<T>(record: Record<string, T>): Map<string, T> {
  return new Map(Object.entries(record));
}

/** The canonical vocabulary. Lookups go through Maps, so names like `__proto__` are merely unknown. */
export class Registry {
  private readonly itemTypes: Map<string, string>;
  private readonly accessTypes: Map<string, string>;
  private readonly policyTypes: Map<string, GrantSubjectType>;
  private readonly delegationRelations: Map<string, string>;
  private readonly subjectTypes: Map<string, SubjectTypeEntry>;
  /** Canonical names and aliases → [canonical name, entry]. */
  private readonly resourceTypes = new Map<string, [string, ResourceTypeEntry]>();

  constructor(document: RegistryDocument) {
    this.itemTypes = entriesOf(document.itemTypes);
    this.accessTypes = entriesOf(document.accessTypes);
    this.policyTypes = entriesOf(document.policyTypes);
    this.delegationRelations = entriesOf(document.delegationRelations);
    this.subjectTypes = entriesOf(document.check.subjectTypes);
    for (const [name, entry] of Object.entries(document.check.resourceTypes)) {
      for (const alias of [name, ...entry.aliases]) {
        if (this.resourceTypes.has(alias)) {
          throw new RegistryError(`resource type name "${alias}" is used twice`);
        }
        this.resourceTypes.set(alias, [name, entry]);
      }
    }
  }

  /** The ACL item types, in the registry's order. */
  itemTypeNames(): string[] {
    return [...this.itemTypes.keys()];
  }

  /** The ACL access types, in the registry's order. */
  accessTypeNames(): string[] {
    return [...this.accessTypes.keys()];
  }

  /** SpiceDB object type of an ACL item type, e.g. DATABANK → resource. */
  objectTypeOfItemType(itemType: string): string | undefined {
    return this.itemTypes.get(itemType);
  }

  /** Relation that holds the consumers of an ACL access type, e.g. api → api_consumer. */
  relationOfAccessType(accessType: string): string | undefined {
    return this.accessTypes.get(accessType);
  }

  /** Subject of a grant's relationships, e.g. GROUP → organization#member. */
  subjectOfPolicyType(policyType: string): GrantSubjectType | undefined {
    return this.policyTypes.get(policyType);
  }

  /** Relation that holds the agents of a delegation, e.g. viewer → viewer_delegate. */
  relationOfDelegation(relation: string): string | undefined {
    return this.delegationRelations.get(relation);
  }

  /** A subject type of the check; undefined when there is none of that name (prototype names included). */
  checkSubjectType(name: string): CheckSubjectType | undefined {
    return this.subjectTypes.get(name);
  }

  /** The subject types of the check, in the registry's order. */
  checkSubjectTypeNames(): string[] {
    return [...this.subjectTypes.keys()];
  }

  /** A resource type of the check by its name or an alias; undefined when there is none of that name. */
  checkResourceType(name: string): CheckResourceType | undefined {
    const found = this.resourceTypes.get(name);
    if (!found) return undefined;
    const [canonical, { objectType, relations }] = found;
    return { name: canonical, objectType, relations };
  }

  /** The names and aliases of the check's resource types, in the registry's order. */
  checkResourceTypeNames(): string[] {
    return [...this.resourceTypes.keys()];
  }
}

const DELEGATED_AGENT = 'agent with expiration';

/** Everything the registry names that the schema does not define as it should. Empty: no drift. */
function findDrift(document: RegistryDocument, schema: SchemaShape): string[] {
  const problems: string[] = [];
  const definition = (objectType: string, where: string) => {
    const found = schema.get(objectType);
    if (!found) problems.push(`${where}: object type "${objectType}" is not defined in schema.zed`);
    return found;
  };

  for (const [itemType, objectType] of Object.entries(document.itemTypes)) {
    const itemDefinition = definition(objectType, `itemTypes.${itemType}`);
    for (const [accessType, relation] of Object.entries(document.accessTypes)) {
      const allowed = itemDefinition?.relations.get(relation);
      if (itemDefinition && !allowed) {
        problems.push(`accessTypes.${accessType}: "${objectType}" has no relation "${relation}"`);
        continue;
      }
      for (const [policyType, { subjectType, subjectRelation }] of Object.entries(document.policyTypes)) {
        const expected = `${subjectType}${subjectRelation ? `#${subjectRelation}` : ''} with expiration`;
        if (allowed && !allowed.includes(expected)) {
          problems.push(`policyTypes.${policyType}: ${objectType}#${relation} does not accept "${expected}"`);
        }
      }
    }
  }

  for (const objectType of new Set(Object.values(document.itemTypes))) {
    const itemDefinition = schema.get(objectType);
    for (const [delegation, relation] of Object.entries(document.delegationRelations)) {
      if (itemDefinition && !itemDefinition.relations.get(relation)?.includes(DELEGATED_AGENT)) {
        problems.push(
          `delegationRelations.${delegation}: ${objectType}#${relation} does not accept "${DELEGATED_AGENT}"`,
        );
      }
    }
  }

  for (const [name, { objectType, relations }] of Object.entries(document.check.resourceTypes)) {
    const resourceDefinition = definition(objectType, `check.resourceTypes.${name}`);
    for (const [publicRelation, target] of Object.entries(relations)) {
      if (
        resourceDefinition &&
        !resourceDefinition.relations.has(target) &&
        !resourceDefinition.permissions.has(target)
      ) {
        problems.push(
          `check.resourceTypes.${name}.relations.${publicRelation}: "${objectType}" has no relation or permission "${target}"`,
        );
      }
    }
    const isItemObjectType = Object.values(document.itemTypes).includes(objectType);
    for (const [accessType, relation] of Object.entries(document.accessTypes)) {
      if (isItemObjectType && relations[accessType] !== relation) {
        problems.push(
          `check.resourceTypes.${name}.relations.${accessType}: must be "${relation}", as accessTypes says`,
        );
      }
    }
  }

  for (const [name, { objectType, relation }] of Object.entries(document.check.subjectTypes)) {
    const subjectDefinition = definition(objectType, `check.subjectTypes.${name}`);
    if (subjectDefinition && relation && !subjectDefinition.relations.has(relation)) {
      problems.push(`check.subjectTypes.${name}: "${objectType}" has no relation "${relation}"`);
    }
  }
  return problems;
}

/** Parses and validates a registry against a schema; throws RegistryError naming every problem. */
export function parseRegistry(registryYaml: string, schemaText: string): Registry {
  const parsed = registryDocument.safeParse(load(registryYaml, { schema: CORE_SCHEMA }));
  if (!parsed.success) throw new RegistryError(`invalid registry: ${z.prettifyError(parsed.error)}`);
  const drift = findDrift(parsed.data, parseSchemaShape(schemaText));
  if (drift.length > 0) throw new RegistryError(`registry and schema.zed disagree:\n- ${drift.join('\n- ')}`);
  return new Registry(parsed.data);
}

/** The project's registry (registry.yaml), checked against the project's schema (schema.zed). */
export function loadRegistry(): Registry {
  return parseRegistry(readFileSync(REGISTRY_FILE, 'utf8'), readSchemaText());
}
