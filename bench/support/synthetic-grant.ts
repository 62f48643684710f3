import { randomUUID } from 'node:crypto';
import type { CatalogItem, PolicyGrant } from '../../src/api/v1alpha1/index.js';
import { enforcedManagedFields, hex, isoSecond } from './synthetic-fields.js';

export const ACL_NAMESPACE = 'policy-grant-system';
/** Grants on one item: a catalogue of this many items. */
export const SYNTHETIC_ITEMS = 200;
/** Objects created in one second, as a steady ACL API client makes them: timestamps repeat this often. */
const CREATED_PER_SECOND = 10;
const CREATED_FROM = Date.parse('2026-06-01T08:00:00Z');

/** When the `index`th synthetic object was created. */
export const createdAt = (index: number) =>
  isoSecond(CREATED_FROM + Math.floor(index / CREATED_PER_SECOND) * 1000);

export const itemIdOf = (index: number) => `urn:dx:item:databank:${hex(index % SYNTHETIC_ITEMS, 8)}`;

/** One enforced grant as the API server serves it after the ACL API created it and the controller enforced it. */
export function syntheticGrant(index: number): PolicyGrant {
  const created = createdAt(index);
  const userId = `00000000-0000-4000-8000-${hex(index, 12)}`;
  const itemId = itemIdOf(index);
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'PolicyGrant',
    metadata: {
      name: `pg-${randomUUID().replaceAll('-', '').slice(0, 32)}${hex(index, 8)}`,
      namespace: ACL_NAMESPACE,
      uid: randomUUID(),
      resourceVersion: String(1_000_000 + index * 3),
      generation: 1,
      creationTimestamp: created as unknown as Date,
      labels: { 'acl.policygrant.dev/created-by': 'acl-api' },
      annotations: { 'acl.policygrant.dev/request-hash': randomUUID().replaceAll('-', '').repeat(2) },
      finalizers: ['acl.policygrant.dev/relationships'],
      managedFields: enforcedManagedFields(
        {
          'f:metadata': {
            'f:annotations': { '.': {}, 'f:acl.policygrant.dev/request-hash': {} },
            'f:labels': { '.': {}, 'f:acl.policygrant.dev/created-by': {} },
          },
          'f:spec': {
            '.': {},
            'f:constraints': { '.': {}, 'f:access': {} },
            'f:expiryTime': {},
            'f:issuerId': {},
            'f:itemId': {},
            'f:itemType': {},
            'f:policyType': {},
            'f:userId': {},
          },
        },
        {
          'f:projected': { '.': {}, 'f:relations': {}, 'f:resource': {}, 'f:subjects': {} },
          'f:relationships': {},
          'f:state': {},
        },
        created,
      ) as never,
    },
    spec: {
      policyType: 'INDIVIDUAL',
      userId,
      itemId,
      itemType: 'DATABANK',
      expiryTime: '2027-12-31T00:00:00Z',
      constraints: { access: [{ accessType: 'api' }] },
      issuerId: `00000000-0000-4000-9000-${hex(index % 50, 12)}`,
    },
    status: {
      observedGeneration: 1,
      state: 'ACTIVE',
      conditions: [
        {
          type: 'Enforced',
          status: 'True',
          reason: 'Projected',
          message: '1 relationship written to SpiceDB',
          lastTransitionTime: created,
          observedGeneration: 1,
        },
      ],
      relationships: 1,
      zedToken: `GhUKEzE3${hex(index * 7919, 12)}MDAwMDAwMDA=`,
      projected: {
        resource: `resource:${itemId.replaceAll(':', '=3A')}`,
        relations: ['api_consumer'],
        subjects: [`user:${userId}`],
      },
    },
  };
}

/** The catalogue item of the synthetic grants on `itemIdOf(index)`. */
export const syntheticCatalogItem = (index: number): CatalogItem => ({
  apiVersion: 'acl.policygrant.dev/v1alpha1',
  kind: 'CatalogItem',
  metadata: { name: `item-${index}` },
  spec: {
    itemId: itemIdOf(index),
    itemType: 'DATABANK',
    ownerId: randomUUID(),
    organisationId: randomUUID(),
    accessTypes: ['api'],
  },
});
