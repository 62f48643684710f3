import { ApiException, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_GROUP,
  API_VERSION,
  CATALOG_ITEM_KIND,
  CATALOG_ITEM_PLURAL,
  ENFORCED_CONDITION,
  EnforcedReason,
  GROUP_VERSION,
  POLICY_GRANT_KIND,
  POLICY_GRANT_PLURAL,
  setStatusCondition,
  type PolicyGrant,
  type PolicyGrantStatus,
} from '../../../src/api/v1alpha1/index.js';
import {
  catalogItemSpec,
  groupSpec,
  individualSpec,
  invalidCatalogItemSpecs,
  invalidPolicyGrantSpecs,
  validPolicyGrantSpecs,
  type InvalidSpecExample,
} from '../../unit/api/spec-examples.js';
import { createTestNamespace, testKubeConfig, uniqueId } from '../support/cluster.js';

// The CRDs in crds/ (generated from the zod schemas) on a real kube-apiserver: the examples that the
// zod validators accept and reject in test/unit/api are accepted and rejected here too, with the CEL
// rule's message on the same field.

interface StatusCause {
  field?: string;
  message?: string;
}

let api: CustomObjectsApi;
let namespace: string;
const catalogItemNames: string[] = [];

beforeAll(async () => {
  api = testKubeConfig().makeApiClient(CustomObjectsApi);
  namespace = await createTestNamespace('crd-validation');
});

afterAll(async () => {
  for (const name of catalogItemNames) {
    await api.deleteClusterCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: CATALOG_ITEM_PLURAL,
      name,
    });
  }
});

function createPolicyGrant(spec: unknown): Promise<PolicyGrant> {
  return api.createNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: POLICY_GRANT_PLURAL,
    body: { apiVersion: GROUP_VERSION, kind: POLICY_GRANT_KIND, metadata: { generateName: 'grant-' }, spec },
  });
}

async function createCatalogItem(spec: unknown): Promise<{ spec: unknown }> {
  const name = uniqueId('item');
  const created = await api.createClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: CATALOG_ITEM_PLURAL,
    body: { apiVersion: GROUP_VERSION, kind: CATALOG_ITEM_KIND, metadata: { name }, spec },
  });
  catalogItemNames.push(name); // cluster-scoped: no namespace cleans it up
  return created;
}

/** The field path as the apiserver writes it: spec.constraints.access[0].accessType. */
function apiserverField(path: (string | number)[]): string {
  return path.reduce<string>(
    (field, segment) => (typeof segment === 'number' ? `${field}[${segment}]` : `${field}.${segment}`),
    'spec',
  );
}

async function expectRejected(creation: Promise<unknown>, example: InvalidSpecExample): Promise<void> {
  const error = await creation.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error, `${example.name} was accepted`).toBeInstanceOf(ApiException);
  const { code, body } = error as ApiException<unknown>;
  expect(code).toBe(422);
  const status = (typeof body === 'string' ? JSON.parse(body) : body) as {
    details?: { causes?: StatusCause[] };
  };
  const onField = (status.details?.causes ?? []).filter(
    (cause) => cause.field === apiserverField(example.field),
  );
  expect(onField, JSON.stringify(status)).not.toEqual([]);
  if (example.ruleMessage) {
    expect(onField.map((cause) => cause.message)).toContainEqual(
      expect.stringContaining(example.ruleMessage),
    );
  }
}

describe('PolicyGrant CRD on the kube-apiserver', () => {
  it.each(validPolicyGrantSpecs)('accepts and keeps every field of: $name', async ({ spec }) => {
    const created = await createPolicyGrant(spec);
    // Nothing pruned: the CRD schema knows every field the zod schema knows.
    expect(created.spec).toEqual(spec);
  });

  it.each(invalidPolicyGrantSpecs)('rejects $name with 422 on the field', async (example) => {
    await expectRejected(createPolicyGrant(example.spec), example);
  });

  it('accepts a status written with the condition helper, and keeps it whole', async () => {
    const created = await createPolicyGrant(individualSpec);
    const generation = created.metadata.generation ?? 1;
    const { conditions } = setStatusCondition(
      [],
      {
        type: ENFORCED_CONDITION,
        status: 'True',
        reason: EnforcedReason.Projected,
        message: '2 relationships written',
        observedGeneration: generation,
      },
      new Date(),
    );
    const status: PolicyGrantStatus = {
      observedGeneration: generation,
      state: 'ACTIVE',
      conditions,
      relationships: 2,
      zedToken: 'GhUKEzE3NjQ1ODk5NjAwMDAwMDAwMDA=',
    };
    const updated: PolicyGrant = await api.replaceNamespacedCustomObjectStatus({
      group: API_GROUP,
      version: API_VERSION,
      namespace,
      plural: POLICY_GRANT_PLURAL,
      name: created.metadata.name as string,
      body: { ...created, status },
    });
    expect(updated.status).toEqual(status);
  });
});

/** An update of the grant's spec (a merge patch, as kubectl edit and apply send). */
function patchSpec(grant: PolicyGrant, spec: Record<string, unknown>): Promise<PolicyGrant> {
  return api.patchNamespacedCustomObject(
    {
      group: API_GROUP,
      version: API_VERSION,
      namespace,
      plural: POLICY_GRANT_PLURAL,
      name: grant.metadata.name as string,
      body: { spec },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

const REVOKED_AT = '2026-03-01T10:00:00Z';
const REVOKER = '9d6c1f2e-4b8a-4c3d-a5e7-1f2b3c4d5e6f';

describe('PolicyGrant CRD transition rules on the kube-apiserver', () => {
  const changes: [string, Record<string, unknown>, string][] = [
    ['policyType', { policyType: 'GROUP', constraints: groupSpec.constraints }, 'policyType is immutable'],
    ['userId', { userId: REVOKER }, 'userId is immutable'],
    ['userId', { userId: null }, 'userId is immutable'],
    ['itemId', { itemId: 'urn:dx:cat:item:another' }, 'itemId is immutable'],
    ['itemType', { itemType: 'DATASET' }, 'itemType is immutable'],
    ['issuerId', { issuerId: REVOKER }, 'issuerId is immutable'],
    ['issuerId', { issuerId: null }, 'issuerId is immutable'],
  ];

  it.each(changes)('refuses an update that changes %s (%j)', async (field, spec, message) => {
    const created = await createPolicyGrant(individualSpec);
    await expectRejected(patchSpec(created, spec), {
      name: field,
      spec,
      field: [field],
      ruleMessage: message,
    });
  });

  it('refuses setting issuerId on a grant created without one', async () => {
    const created = await createPolicyGrant(groupSpec);
    const example = { name: 'issuerId', spec: {}, field: ['issuerId'], ruleMessage: 'issuerId is immutable' };
    await expectRejected(patchSpec(created, { issuerId: REVOKER }), example);
  });

  it('accepts a revocation, then refuses undoing, moving or re-attributing it', async () => {
    const created = await createPolicyGrant(individualSpec);
    const revoked = await patchSpec(created, { revokedAt: REVOKED_AT, revokedBy: REVOKER });
    expect(revoked.spec).toMatchObject({ revokedAt: REVOKED_AT, revokedBy: REVOKER });
    const final = 'is final once set';
    for (const [field, value] of [
      ['revokedAt', null],
      ['revokedAt', '2026-03-02T10:00:00Z'],
      ['revokedBy', null],
      ['revokedBy', individualSpec.userId],
    ] as const) {
      const example = { name: field, spec: {}, field: [field], ruleMessage: `${field} ${final}` };
      await expectRejected(patchSpec(revoked, { [field]: value }), example);
    }
  });

  it('still accepts changes of the other fields (expiry, access)', async () => {
    const created = await createPolicyGrant(individualSpec);
    const spec = { expiryTime: '2028-01-31T00:00:00Z', constraints: { access: [{ accessType: 'api' }] } };
    expect((await patchSpec(created, spec)).spec).toMatchObject(spec);
  });
});

describe('CatalogItem CRD on the kube-apiserver', () => {
  it('accepts a catalog item and keeps every field', async () => {
    expect((await createCatalogItem(catalogItemSpec)).spec).toEqual(catalogItemSpec);
  });

  it.each(invalidCatalogItemSpecs)('rejects $name with 422 on the field', async (example) => {
    await expectRejected(createCatalogItem(example.spec), example);
  });
});
