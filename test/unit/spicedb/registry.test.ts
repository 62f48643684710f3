import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { loadRegistry, parseRegistry, REGISTRY_FILE, RegistryError } from '../../../src/spicedb/registry.js';
import { parseSchemaShape, readSchemaText } from '../../../src/spicedb/schema.js';

const registryYaml = readFileSync(REGISTRY_FILE, 'utf8');
const schemaText = readSchemaText();
const registry = loadRegistry();

describe('the registry lists its entries', () => {
  it('names its item types and access types in the file’s order', () => {
    expect(registry.itemTypeNames()).toEqual(['DATABANK']);
    expect(registry.accessTypeNames()).toEqual(['api', 'file', 'sub']);
  });
});

describe('the registry and schema.zed agree (drift)', () => {
  const shape = parseSchemaShape(schemaText);
  const raw = load(registryYaml) as {
    itemTypes: Record<string, string>;
    accessTypes: Record<string, string>;
    check: { resourceTypes: Record<string, { objectType: string; relations: Record<string, string> }> };
  };

  it('every public relation names a relation or permission of its object type', () => {
    const missing: string[] = [];
    for (const { objectType, relations } of Object.values(raw.check.resourceTypes)) {
      const definition = shape.get(objectType);
      for (const target of Object.values(relations)) {
        if (!definition?.relations.has(target) && !definition?.permissions.has(target)) {
          missing.push(`${objectType}#${target}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('every access type relation takes users and organisation members with an expiration', () => {
    for (const objectType of new Set(Object.values(raw.itemTypes))) {
      for (const relation of Object.values(raw.accessTypes)) {
        expect(shape.get(objectType)?.relations.get(relation)).toEqual([
          'user with expiration',
          'organization#member with expiration',
        ]);
      }
    }
  });

  it('the project registry loads against the project schema', () => {
    expect(() => loadRegistry()).not.toThrow();
  });

  it.each([
    [
      'a relation the registry maps to',
      'relation api_consumer:',
      'relation api_consumer_renamed:',
      'api_consumer',
    ],
    ['the viewer permission', 'permission viewer =', 'permission viewing =', 'viewer'],
    [
      'the expiration of a grant relation',
      'relation sub_consumer: user with expiration',
      'relation sub_consumer: user',
      'user with expiration',
    ],
    [
      'the member relation of groups',
      'relation member: user\n\tpermission agent = member->agent\n}\n\ndefinition resource',
      'relation members: user\n\tpermission agent = member->agent\n}\n\ndefinition resource',
      'member',
    ],
    [
      'the expiration of a delegation relation',
      'relation editor_delegate: agent with expiration',
      'relation editor_delegate: agent',
      'delegationRelations.editor',
    ],
    [
      'the intersection of the delegated querier',
      'permission delegated_querier =',
      'permission delegated_querying =',
      'delegated_querier',
    ],
  ])('refuses a schema that lost %s', (_, from, to, named) => {
    const drifted = schemaText.replace(from, to);
    expect(drifted).not.toBe(schemaText);
    expect(() => parseRegistry(registryYaml, drifted)).toThrow(RegistryError);
    expect(() => parseRegistry(registryYaml, drifted)).toThrow(named);
  });
});

describe('parseRegistry', () => {
  it('refuses unknown keys, naming them', () => {
    expect(() => parseRegistry(`${registryYaml}\nextra: 1\n`, schemaText)).toThrow(/extra/);
  });

  it('refuses an alias used by two resource types', () => {
    const twice = registryYaml.replace('aliases: [DATABANK]', 'aliases: [DATABANK, resource]');
    expect(() => parseRegistry(twice, schemaText)).toThrow(/"resource" is used twice/);
  });

  it('refuses a check vocabulary that maps an access type elsewhere than accessTypes does', () => {
    const elsewhere = registryYaml.replace('        api: api_consumer', '        api: file_consumer');
    expect(() => parseRegistry(elsewhere, schemaText)).toThrow(/relations\.api: must be "api_consumer"/);
  });
});

describe('ACL vocabulary', () => {
  it('maps item types, access types and policy types', () => {
    expect(registry.objectTypeOfItemType('DATABANK')).toBe('resource');
    expect(registry.relationOfAccessType('api')).toBe('api_consumer');
    expect(registry.relationOfAccessType('file')).toBe('file_consumer');
    expect(registry.relationOfAccessType('sub')).toBe('sub_consumer');
    expect(registry.subjectOfPolicyType('INDIVIDUAL')).toEqual({ subjectType: 'user' });
    expect(registry.subjectOfPolicyType('GROUP')).toEqual({
      subjectType: 'organization',
      subjectRelation: 'member',
    });
  });

  it('maps delegation relations to the relations holding the delegated agents', () => {
    expect(registry.relationOfDelegation('viewer')).toBe('viewer_delegate');
    expect(registry.relationOfDelegation('editor')).toBe('editor_delegate');
    expect(registry.relationOfDelegation('querier')).toBe('querier_delegate');
    expect(registry.relationOfDelegation('api')).toBeUndefined();
  });

  it('knows nothing else, prototype names included', () => {
    expect(registry.objectTypeOfItemType('databank')).toBeUndefined();
    expect(registry.relationOfAccessType('toString')).toBeUndefined();
    expect(registry.subjectOfPolicyType('__proto__')).toBeUndefined();
  });
});
