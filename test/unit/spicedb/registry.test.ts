import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import {
  CheckRequestError,
  loadRegistry,
  parseRegistry,
  REGISTRY_FILE,
  RegistryError,
  type CheckRequest,
  type CheckRequestField,
} from '../../../src/spicedb/registry.js';
import { parseSchemaShape, readSchemaText } from '../../../src/spicedb/schema.js';

const registryYaml = readFileSync(REGISTRY_FILE, 'utf8');
const schemaText = readSchemaText();
const registry = loadRegistry();

const aliceChecksApi: CheckRequest = {
  subject_type: 'user',
  subject_id: 'alice',
  organisation_id: '',
  resource_type: 'resource',
  resource_id: 'urn:dx:item:1',
  relation: 'api',
};

function fieldOfError(request: CheckRequest): CheckRequestField | undefined {
  try {
    registry.canonicalise(request);
  } catch (error) {
    if (error instanceof CheckRequestError) return error.field;
    throw error;
  }
  return undefined;
}

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

describe('canonicalise', () => {
  it('maps a user check of an access type to the consumer relation, with encoded ids', () => {
    expect(registry.canonicalise(aliceChecksApi)).toEqual({
      subject: { type: 'user', id: 'alice' },
      object: { type: 'resource', id: 'urn:dx:item:1' },
      relation: 'api',
      spicedb: {
        resourceType: 'resource',
        resourceId: 'urn=3Adx=3Aitem=3A1',
        permission: 'api_consumer',
        subjectType: 'user',
        subjectId: 'alice',
      },
    });
  });

  it('accepts an ACL item type as an alias and answers with the canonical resource type', () => {
    const canonical = registry.canonicalise({
      ...aliceChecksApi,
      resource_type: 'DATABANK',
      relation: 'viewer',
    });
    expect(canonical.object.type).toBe('resource');
    expect(canonical.spicedb.permission).toBe('viewer');
  });

  it('treats a group as the members of that group within its organisation', () => {
    const canonical = registry.canonicalise({
      ...aliceChecksApi,
      subject_type: 'group',
      subject_id: 'urn:group:analysts',
      organisation_id: 'org-7',
      relation: 'editor',
    });
    expect(canonical.subject).toEqual({ type: 'group', id: 'urn:group:analysts', organisation_id: 'org-7' });
    expect(canonical.spicedb).toMatchObject({
      subjectType: 'group',
      subjectId: 'org-7|urn=3Agroup=3Aanalysts',
      subjectRelation: 'member',
      permission: 'editor',
    });
  });

  it('maps an agent check of a delegated relation to the intersecting permission', () => {
    const canonical = registry.canonicalise({
      ...aliceChecksApi,
      subject_type: 'agent',
      subject_id: 'urn:agent:7',
      relation: 'delegated_querier',
    });
    expect(canonical.subject).toEqual({ type: 'agent', id: 'urn:agent:7' });
    expect(canonical.spicedb).toMatchObject({
      subjectType: 'agent',
      subjectId: 'urn=3Aagent=3A7',
      permission: 'delegated_querier',
    });
  });

  it('accepts an absent organisation_id for a user', () => {
    const { organisation_id: _, ...withoutOrganisation } = aliceChecksApi;
    expect(registry.canonicalise(withoutOrganisation).subject).toEqual({ type: 'user', id: 'alice' });
  });

  it.each<[string, Partial<CheckRequest>, CheckRequestField]>([
    ['an unknown subject type', { subject_type: 'robot' }, 'subject_type'],
    ['an empty subject id', { subject_id: '' }, 'subject_id'],
    ['a subject id that is not well-formed Unicode', { subject_id: 'a\ud800' }, 'subject_id'],
    ['a group without organisation', { subject_type: 'group', organisation_id: '' }, 'organisation_id'],
    ['a user with an organisation', { organisation_id: 'org-7' }, 'organisation_id'],
    [
      'a group pair too long to encode',
      { subject_type: 'group', subject_id: 'g'.repeat(600), organisation_id: 'o'.repeat(600) },
      'subject_id',
    ],
    ['an unknown resource type', { resource_type: 'databank' }, 'resource_type'],
    ['a prototype name as resource type', { resource_type: '__proto__' }, 'resource_type'],
    ['an empty resource id', { resource_id: '' }, 'resource_id'],
    ['a resource id too long to encode', { resource_id: ':'.repeat(400) }, 'resource_id'],
    ['a SpiceDB relation name that is not public', { relation: 'api_consumer' }, 'relation'],
    ['a relation undefined on the resource type', { relation: 'admin' }, 'relation'],
    ['a prototype name as relation', { relation: 'constructor' }, 'relation'],
  ])('refuses %s, naming the field', (_, change, field) => {
    expect(fieldOfError({ ...aliceChecksApi, ...change })).toBe(field);
  });

  it('says what is known when a name is unknown', () => {
    expect(() => registry.canonicalise({ ...aliceChecksApi, relation: 'admin' })).toThrow(
      /relation "admin" is not defined on resource_type "resource"; defined: .*"api"/,
    );
    expect(() => registry.canonicalise({ ...aliceChecksApi, resource_type: 'x' })).toThrow(
      /known: "resource", "DATABANK"/,
    );
  });
});
