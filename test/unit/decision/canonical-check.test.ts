import { describe, expect, it } from 'vitest';
import { AUTHZEN_FIELDS } from '../../../src/decision/authzen/authzen-vocabulary.js';
import { canonicalCheck, CheckRequestError, relationNames } from '../../../src/decision/canonical-check.js';
import type { CheckField, FieldNames } from '../../../src/decision/canonical-check.js';
import { CHECK_BODY_FIELDS, checkRequestOfBody } from '../../../src/decision/check-request.js';
import type { CheckRequestBody } from '../../../src/decision/check-request.js';
import { loadRegistry } from '../../../src/spicedb/registry.js';
import { aliceChecksApi as validCheckBody } from './support/decision-app.js';

const registry = loadRegistry();

// Requests written as POST /v1/check's body, the flat shape its callers send.
const aliceChecksApi = validCheckBody() as CheckRequestBody;

const canonicalOf = (body: CheckRequestBody) => canonicalCheck(registry, checkRequestOfBody(body));

function errorOf(body: CheckRequestBody): CheckRequestError | undefined {
  try {
    canonicalOf(body);
  } catch (error) {
    if (error instanceof CheckRequestError) return error;
    throw error;
  }
  return undefined;
}

const fieldOfError = (body: CheckRequestBody): CheckField | undefined => errorOf(body)?.field;
const detailOfError = (body: CheckRequestBody, names: FieldNames) => errorOf(body)?.detail(names);

describe('canonicalCheck', () => {
  it('maps a user check of an access type to the consumer relation, with encoded ids', () => {
    expect(canonicalOf(aliceChecksApi)).toEqual({
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
    const canonical = canonicalOf({
      ...aliceChecksApi,
      resource_type: 'DATABANK',
      relation: 'viewer',
    });
    expect(canonical.object.type).toBe('resource');
    expect(canonical.spicedb.permission).toBe('viewer');
  });

  it('treats a group as the members of that group within its organisation', () => {
    const canonical = canonicalOf({
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
    const canonical = canonicalOf({
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
    expect(canonicalOf(withoutOrganisation).subject).toEqual({ type: 'user', id: 'alice' });
  });

  it.each<[string, Partial<CheckRequestBody>, CheckField]>([
    ['an unknown subject type', { subject_type: 'robot' }, 'subject.type'],
    ['an empty subject id', { subject_id: '' }, 'subject.id'],
    ['a subject id that is not well-formed Unicode', { subject_id: 'a\ud800' }, 'subject.id'],
    [
      'a group without organisation',
      { subject_type: 'group', organisation_id: '' },
      'subject.organisation_id',
    ],
    ['a user with an organisation', { organisation_id: 'org-7' }, 'subject.organisation_id'],
    [
      'a group pair too long to encode',
      { subject_type: 'group', subject_id: 'g'.repeat(600), organisation_id: 'o'.repeat(600) },
      'subject.id',
    ],
    ['an unknown resource type', { resource_type: 'databank' }, 'resource.type'],
    ['a prototype name as resource type', { resource_type: '__proto__' }, 'resource.type'],
    ['an empty resource id', { resource_id: '' }, 'resource.id'],
    ['a resource id too long to encode', { resource_id: ':'.repeat(400) }, 'resource.id'],
    ['a SpiceDB relation name that is not public', { relation: 'api_consumer' }, 'relation'],
    ['a relation undefined on the resource type', { relation: 'admin' }, 'relation'],
    ['a prototype name as relation', { relation: 'constructor' }, 'relation'],
  ])('refuses %s, naming the field', (_, change, field) => {
    expect(fieldOfError({ ...aliceChecksApi, ...change })).toBe(field);
  });

  it('says what is known when a name is unknown, in the words of the API that asked', () => {
    expect(detailOfError({ ...aliceChecksApi, relation: 'admin' }, CHECK_BODY_FIELDS)).toMatch(
      /relation "admin" is not defined on resource_type "resource"; defined: .*"api"/,
    );
    expect(detailOfError({ ...aliceChecksApi, resource_type: 'x' }, CHECK_BODY_FIELDS)).toMatch(
      /known: "resource", "DATABANK"/,
    );
    expect(detailOfError({ ...aliceChecksApi, relation: 'admin' }, AUTHZEN_FIELDS)).toMatch(
      /^action\.name: relation "admin" is not defined on resource\.type "resource"; defined: .*"api"/,
    );
    expect(
      detailOfError({ ...aliceChecksApi, subject_type: 'group', organisation_id: '' }, AUTHZEN_FIELDS),
    ).toBe(
      'subject.properties.organisation_id: subject.properties.organisation_id is required when subject.type is "group"',
    );
  });
});

describe('relationNames', () => {
  it('lists the public relations of a resource type or alias; an unknown type is an error naming resource.type', () => {
    expect(relationNames(registry, 'DATABANK')).toEqual(relationNames(registry, 'resource'));
    expect(relationNames(registry, 'resource')).toContain('api');
    expect(() => relationNames(registry, 'robot')).toThrow(
      expect.objectContaining({ field: 'resource.type' }) as Error,
    );
  });
});
