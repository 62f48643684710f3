import type { V1ObjectMeta } from '@kubernetes/client-node';
import { z } from 'zod';
import { withCrossFieldRules, type CrossFieldRule } from './cross-field-rules.js';
import { itemIdField, typeNameField, uuidField } from './field-schemas.js';
import type { CATALOG_ITEM_KIND, GROUP_VERSION } from './group-version.js';
import { MAX_ACCESS_ENTRIES } from './policy-grant.js';

const CatalogItemSpecFieldsSchema = z
  .object({
    itemId: itemIdField().describe(
      'Identifier of the item (URN-shaped) that grants name; unique across CatalogItems.',
    ),
    itemType: typeNameField().describe('Type of the item, for example DATABANK.'),
    ownerId: uuidField().describe('UUID of the provider user who owns the item.'),
    organisationId: uuidField().describe('UUID of the organisation the item belongs to.'),
    accessTypes: z
      .array(typeNameField().describe('An access type, for example api, file or sub.'))
      .min(1)
      .max(MAX_ACCESS_ENTRIES)
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .describe('Access types that grants on this item may use, each at most once.'),
  })
  .describe('An item that grants can name, with its owner, organisation and usable access types.');

type CatalogItemSpecFields = z.output<typeof CatalogItemSpecFieldsSchema>;

/** The rules of a CatalogItem spec that its schema alone cannot say: CEL and TypeScript side by side. */
export const catalogItemSpecRules: readonly CrossFieldRule<CatalogItemSpecFields>[] = [
  {
    field: ['accessTypes'],
    message: 'each access type may appear only once in accessTypes',
    reason: 'FieldValueInvalid',
    cel: 'self.accessTypes.all(t, self.accessTypes.exists_one(u, u == t))',
    holds: (spec) => new Set(spec.accessTypes).size === spec.accessTypes.length,
  },
];

export const CatalogItemSpecSchema = withCrossFieldRules(CatalogItemSpecFieldsSchema, catalogItemSpecRules);
export type CatalogItemSpec = z.infer<typeof CatalogItemSpecSchema>;

/** A CatalogItem object as the Kubernetes API serves it (cluster-scoped, no status). */
export interface CatalogItem {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof CATALOG_ITEM_KIND;
  metadata: V1ObjectMeta;
  spec: CatalogItemSpec;
}
