import { describe, expect, it } from 'vitest';
import {
  candidateTupleKeys,
  describeUnprojectable,
  projectGrant,
  projectOwners,
} from '../../../src/verdict/projection.js';
import { tupleKey } from '../../../src/verdict/tuple-key.js';
import {
  EXPIRY,
  grantSpec,
  ITEM_ID,
  ITEM_OBJECT_ID,
  ORG_A,
  ORG_B,
  OWNER,
  registry,
  USER,
} from '../controller/support/fakes.js';

const resource = { type: 'resource', id: ITEM_OBJECT_ID };
const expiresAt = new Date(EXPIRY);

describe('projectGrant', () => {
  it('projects an INDIVIDUAL grant to one user tuple per access type, expiring at expiryTime', () => {
    const spec = grantSpec({ constraints: { access: [{ accessType: 'api' }, { accessType: 'file' }] } });
    expect(projectGrant(spec, registry)).toEqual({
      relationships: [
        { resource, relation: 'api_consumer', subject: { type: 'user', id: USER }, expiresAt },
        { resource, relation: 'file_consumer', subject: { type: 'user', id: USER }, expiresAt },
      ],
      unprojectable: [],
    });
  });

  it('projects a GROUP grant to organization#member of each allowed organisation, each access type', () => {
    const spec = grantSpec({
      policyType: 'GROUP',
      userId: undefined,
      constraints: {
        access: [{ accessType: 'sub' }, { accessType: 'api' }],
        subjects: { allowedOrgIds: [ORG_A, ORG_B] },
      },
    });
    const keys = projectGrant(spec, registry).relationships.map(tupleKey);
    expect(keys).toEqual([
      `resource:${ITEM_OBJECT_ID}#sub_consumer@organization:${ORG_A}#member`,
      `resource:${ITEM_OBJECT_ID}#sub_consumer@organization:${ORG_B}#member`,
      `resource:${ITEM_OBJECT_ID}#api_consumer@organization:${ORG_A}#member`,
      `resource:${ITEM_OBJECT_ID}#api_consumer@organization:${ORG_B}#member`,
    ]);
  });

  it('names an organisation listed twice once: SpiceDB refuses a write naming one tuple twice', () => {
    const spec = grantSpec({
      policyType: 'GROUP',
      constraints: { access: [{ accessType: 'api' }], subjects: { allowedOrgIds: [ORG_A, ORG_A] } },
    });
    expect(projectGrant(spec, registry).relationships).toHaveLength(1);
  });

  it('encodes the item URN into a SpiceDB object id, reversibly', () => {
    const spec = grantSpec({ itemId: 'urn:dx:item:ä b/c' });
    expect(projectGrant(spec, registry).relationships[0]?.resource.id).toBe('urn=3Adx=3Aitem=3A=C3=A4=20b/c');
  });

  it('keeps the expiry instant of an expiryTime with an offset', () => {
    const spec = grantSpec({ expiryTime: '2027-01-31T12:30:00.250+01:00' });
    expect(projectGrant(spec, registry).relationships[0]?.expiresAt).toEqual(
      new Date('2027-01-31T11:30:00.250Z'),
    );
  });

  it('reports access types the registry does not know, and still projects the known ones', () => {
    const spec = grantSpec({ constraints: { access: [{ accessType: 'api' }, { accessType: 'telepathy' }] } });
    const { relationships, unprojectable } = projectGrant(spec, registry);
    expect(relationships.map((r) => r.relation)).toEqual(['api_consumer']);
    expect(unprojectable).toEqual([{ kind: 'accessType', accessType: 'telepathy' }]);
    expect(unprojectable.map(describeUnprojectable)).toEqual([
      'access type "telepathy" has no relation in the registry',
    ]);
  });

  it('projects nothing for an item type the registry does not know', () => {
    const { relationships, unprojectable } = projectGrant(grantSpec({ itemType: 'SPACESHIP' }), registry);
    expect(relationships).toEqual([]);
    expect(unprojectable).toEqual([{ kind: 'itemType', itemType: 'SPACESHIP' }]);
  });

  it('projects nothing for an item id that cannot be a SpiceDB object id', () => {
    const { relationships, unprojectable } = projectGrant(grantSpec({ itemId: 'é'.repeat(600) }), registry);
    expect(relationships).toEqual([]);
    expect(unprojectable).toEqual([
      { kind: 'id', message: expect.stringMatching(/^itemId: id is too long/) },
    ]);
  });

  it('reports a grant without its subjects (which the CRD forbids)', () => {
    expect(projectGrant(grantSpec({ userId: undefined }), registry).unprojectable).toEqual([
      { kind: 'subject', message: 'an INDIVIDUAL grant needs userId' },
    ]);
    expect(projectGrant(grantSpec({ policyType: 'GROUP' }), registry).unprojectable).toEqual([
      { kind: 'subject', message: 'a GROUP grant needs constraints.subjects.allowedOrgIds' },
    ]);
  });

  it('gives the candidate keys whatever the state: revoked and expired grants have the same ones', () => {
    const active = candidateTupleKeys(grantSpec(), registry);
    expect(
      candidateTupleKeys(
        grantSpec({ revokedAt: '2026-01-01T00:00:00Z', expiryTime: '2020-01-01T00:00:00Z' }),
        registry,
      ),
    ).toEqual(active);
    expect(active).toEqual([`resource:${ITEM_OBJECT_ID}#api_consumer@user:${USER}`]);
  });
});

describe('projectOwners', () => {
  const item = {
    itemId: ITEM_ID,
    itemType: 'DATABANK',
    ownerId: OWNER,
    organisationId: ORG_A,
    accessTypes: ['api'],
  };

  it('projects the owner user and the organisation as owners, without expiration', () => {
    expect(projectOwners(item, registry)).toEqual([
      { resource, relation: 'owner', subject: { type: 'user', id: OWNER } },
      { resource, relation: 'owner', subject: { type: 'organization', id: ORG_A } },
    ]);
  });

  it('projects nothing for an unknown item type or an id that cannot be encoded', () => {
    expect(projectOwners({ ...item, itemType: 'SPACESHIP' }, registry)).toEqual([]);
    expect(projectOwners({ ...item, itemId: 'x'.repeat(1_025) }, registry)).toEqual([]);
  });
});
