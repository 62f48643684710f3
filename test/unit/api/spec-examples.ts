// Valid and invalid specs shared by the zod unit tests and the kube-apiserver integration test, so
// that the zod validators and the CRD (schema + CEL) are held to the very same examples.
import { randomUUID } from 'node:crypto';
import type { CatalogItemSpec, PolicyGrantSpec } from '../../../src/api/v1alpha1/index.js';
import { MAX_ALLOWED_ORGS } from '../../../src/api/v1alpha1/policy-grant.js';

const USER = '3f1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d';
const ORG_A = '0b9e4f1a-7c2d-4a8e-b3f6-5d1c9e2a7b40';
const ORG_B = 'c4d5e6f7-0809-4a1b-8c2d-3e4f5a6b7c8d';

export const individualSpec: PolicyGrantSpec = {
  policyType: 'INDIVIDUAL',
  userId: USER,
  itemId: 'urn:dx:cat:item:7f3e9c1a-weather-stations',
  itemType: 'DATABANK',
  expiryTime: '2027-01-31T00:00:00Z',
  constraints: { access: [{ accessType: 'api' }, { accessType: 'file' }] },
  issuerId: ORG_B,
};

export const groupSpec: PolicyGrantSpec = {
  policyType: 'GROUP',
  itemId: 'urn:dx:cat:item:7f3e9c1a-weather-stations',
  itemType: 'DATABANK',
  expiryTime: '2027-01-31T12:30:00.250+01:00',
  constraints: { access: [{ accessType: 'sub' }], subjects: { allowedOrgIds: [ORG_A, ORG_B] } },
};

export interface SpecExample {
  name: string;
  spec: unknown;
}

export const validPolicyGrantSpecs: SpecExample[] = [
  { name: 'INDIVIDUAL grant', spec: individualSpec },
  { name: 'GROUP grant', spec: groupSpec },
  {
    name: 'revoked grant',
    spec: { ...individualSpec, revokedAt: '2026-06-01T08:00:00Z', revokedBy: ORG_B },
  },
  {
    name: 'three distinct access types',
    spec: {
      ...individualSpec,
      constraints: { access: [{ accessType: 'api' }, { accessType: 'file' }, { accessType: 'sub' }] },
    },
  },
  {
    name: 'INDIVIDUAL grant that also names organisations',
    spec: { ...individualSpec, constraints: groupSpec.constraints },
  },
];

export interface InvalidSpecExample extends SpecExample {
  /** Path of the field the error must name, relative to spec. */
  field: (string | number)[];
  /** The message of the cross-field rule that rejects it, when a rule (not the schema) is at fault. */
  ruleMessage?: string;
}

const { userId: _userId, ...individualWithoutUser } = individualSpec;

export const invalidPolicyGrantSpecs: InvalidSpecExample[] = [
  {
    name: 'INDIVIDUAL without userId',
    spec: individualWithoutUser,
    field: ['userId'],
    ruleMessage: 'userId is required when policyType is INDIVIDUAL',
  },
  {
    name: 'GROUP without constraints.subjects',
    spec: { ...groupSpec, constraints: { access: groupSpec.constraints.access } },
    field: ['constraints', 'subjects', 'allowedOrgIds'],
    ruleMessage: 'constraints.subjects.allowedOrgIds is required when policyType is GROUP',
  },
  {
    name: 'GROUP with subjects but no allowedOrgIds',
    spec: { ...groupSpec, constraints: { access: groupSpec.constraints.access, subjects: {} } },
    field: ['constraints', 'subjects', 'allowedOrgIds'],
  },
  {
    name: 'duplicate access type',
    spec: {
      ...individualSpec,
      constraints: { access: [{ accessType: 'api' }, { accessType: 'file' }, { accessType: 'api' }] },
    },
    field: ['constraints', 'access'],
    ruleMessage: 'each accessType may appear only once in constraints.access',
  },
  {
    name: 'empty access',
    spec: { ...individualSpec, constraints: { access: [] } },
    field: ['constraints', 'access'],
  },
  {
    name: 'empty accessType',
    spec: { ...individualSpec, constraints: { access: [{ accessType: '' }] } },
    field: ['constraints', 'access', 0, 'accessType'],
  },
  {
    name: 'empty allowedOrgIds',
    spec: {
      ...groupSpec,
      constraints: { access: groupSpec.constraints.access, subjects: { allowedOrgIds: [] } },
    },
    field: ['constraints', 'subjects', 'allowedOrgIds'],
  },
  {
    // The bound keeps a GROUP grant's fan-out (claims, tuples, verify's membership lookups) finite.
    name: 'more allowedOrgIds than MAX_ALLOWED_ORGS',
    spec: {
      ...groupSpec,
      constraints: {
        access: groupSpec.constraints.access,
        subjects: { allowedOrgIds: Array.from({ length: MAX_ALLOWED_ORGS + 1 }, () => randomUUID()) },
      },
    },
    field: ['constraints', 'subjects', 'allowedOrgIds'],
  },
  { name: 'userId not a UUID', spec: { ...individualSpec, userId: 'alice' }, field: ['userId'] },
  {
    name: 'userId in upper case',
    spec: { ...individualSpec, userId: USER.toUpperCase() },
    field: ['userId'],
  },
  {
    name: 'allowedOrgIds with a bad UUID',
    spec: {
      ...groupSpec,
      constraints: { access: groupSpec.constraints.access, subjects: { allowedOrgIds: [ORG_A, 'org-b'] } },
    },
    field: ['constraints', 'subjects', 'allowedOrgIds', 1],
  },
  { name: 'issuerId not a UUID', spec: { ...individualSpec, issuerId: '42' }, field: ['issuerId'] },
  {
    name: 'expiryTime without a time',
    spec: { ...individualSpec, expiryTime: '2027-01-31' },
    field: ['expiryTime'],
  },
  {
    name: 'expiryTime without a zone',
    spec: { ...individualSpec, expiryTime: '2027-01-31T00:00:00' },
    field: ['expiryTime'],
  },
  {
    name: 'expiryTime on 30 February',
    spec: { ...individualSpec, expiryTime: '2027-02-30T00:00:00Z' },
    field: ['expiryTime'],
  },
  { name: 'revokedAt not a date', spec: { ...individualSpec, revokedAt: 'yesterday' }, field: ['revokedAt'] },
  { name: 'unknown policyType', spec: { ...individualSpec, policyType: 'TEAM' }, field: ['policyType'] },
  { name: 'empty itemId', spec: { ...individualSpec, itemId: '' }, field: ['itemId'] },
  {
    name: 'itemId over 1024 characters',
    spec: { ...individualSpec, itemId: 'x'.repeat(1025) },
    field: ['itemId'],
  },
];

export const catalogItemSpec: CatalogItemSpec = {
  itemId: 'urn:dx:cat:item:7f3e9c1a-weather-stations',
  itemType: 'DATABANK',
  ownerId: USER,
  organisationId: ORG_A,
  accessTypes: ['api', 'file', 'sub'],
};

export const invalidCatalogItemSpecs: InvalidSpecExample[] = [
  {
    name: 'duplicate access type',
    spec: { ...catalogItemSpec, accessTypes: ['api', 'sub', 'api'] },
    field: ['accessTypes'],
    ruleMessage: 'each access type may appear only once in accessTypes',
  },
  { name: 'no access types', spec: { ...catalogItemSpec, accessTypes: [] }, field: ['accessTypes'] },
  { name: 'ownerId not a UUID', spec: { ...catalogItemSpec, ownerId: 'bob' }, field: ['ownerId'] },
];
