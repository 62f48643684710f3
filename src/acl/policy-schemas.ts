import { z } from 'zod';
import { EnforcementReportSchema } from './policies/enforcement-wait.js';
import {
  ConstraintsSchema,
  PolicyGrantRequestItemSchema,
  PolicyGrantStateSchema,
} from '../api/v1alpha1/index.js';
import { itemIdField, uuidField } from '../api/v1alpha1/field-schemas.js';
import { successEnvelopeSchema } from '../http/envelope.js';
import { queryInteger } from '../http/query-integer.js';
import type { UrnScheme } from '../http/urn.js';
import { WITHHELD_REASONS } from '../verdict/grant-verdict.js';

// The ACL API's request and response schemas: they validate requests and describe the OpenAPI document.

export const MAX_ITEMS_PER_REQUEST = 100;
export const MAX_LISTING_LIMIT = 1000;
export const DEFAULT_LISTING_LIMIT = 50;

/** The rules of a create item beyond the CRD's: they depend on the clock or only make sense in a request. */
export const CreateItemSchema = PolicyGrantRequestItemSchema.superRefine((item, ctx) => {
  if (!(Date.parse(item.expiryTime) > Date.now())) {
    ctx.addIssue({ code: 'custom', path: ['expiryTime'], message: 'expiryTime must be in the future' });
  }
  if (item.policyType === 'GROUP' && item.userId !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['userId'],
      message: 'userId must not be set when policyType is GROUP (its consumers are constraints.subjects)',
    });
  }
  if (item.policyType === 'INDIVIDUAL' && item.constraints.subjects !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['constraints', 'subjects'],
      message: 'constraints.subjects must not be set when policyType is INDIVIDUAL (its consumer is userId)',
    });
  }
}).meta({
  description:
    'One grant to create. Beyond the schema: expiryTime must be in the future when the request arrives (else 400). ' +
    'Each accessType at most once in constraints.access. The CatalogItem with the itemId decides the rest (else ' +
    '400): itemType must be its itemType, and each accessType one of its accessTypes.',
  // The consumer rules above and in policyGrantSpecRules, in JSON Schema 2020-12 for the document's readers
  // and generated clients: an INDIVIDUAL grant names userId and no subjects, a GROUP grant the reverse.
  allOf: [
    {
      if: { properties: { policyType: { const: 'INDIVIDUAL' } } },
      then: { required: ['userId'], properties: { constraints: { not: { required: ['subjects'] } } } },
    },
    {
      if: { properties: { policyType: { const: 'GROUP' } } },
      then: { not: { required: ['userId'] }, properties: { constraints: { required: ['subjects'] } } },
    },
  ],
});
export type CreateItem = z.output<typeof CreateItemSchema>;

export const CreateBodySchema = z
  .object({
    request: z
      .array(CreateItemSchema)
      .min(1)
      .max(MAX_ITEMS_PER_REQUEST)
      .describe(`The grants to create, 1 to ${MAX_ITEMS_PER_REQUEST}; all are created or none.`),
  })
  .meta({ id: 'CreatePolicyRequest' });

const PreferHeader = z
  .string()
  .max(1024)
  .optional()
  .describe(
    'RFC 7240. `wait=N`: answer once the controller reports the change enforced (at most N seconds, ' +
      'at most 60), with the ZedToken to pass to /v1/check; on timeout the answer still reports the change ' +
      'as committed, with enforced false.',
  );

export const PreferHeadersSchema = z.object({ prefer: PreferHeader });

export const CreateHeadersSchema = z.object({
  prefer: PreferHeader,
  'idempotency-key': z
    .string()
    .regex(/^[\x20-\x7e]{1,255}$/, 'Idempotency-Key must be 1 to 255 printable ASCII characters')
    .optional()
    .describe('A retry with the same key and body answers the first answer again and creates nothing.'),
});

export const listingLimit = (rows: string) =>
  queryInteger('limit', {
    minimum: 1,
    maximum: MAX_LISTING_LIMIT,
    default: DEFAULT_LISTING_LIMIT,
    description: `${rows} per page, 1 to ${MAX_LISTING_LIMIT}; default ${DEFAULT_LISTING_LIMIT}.`,
  });

export const ListingQuerySchema = z.object({
  status: PolicyGrantStateSchema.optional().describe('Only rows in this derived state.'),
  limit: listingLimit('Rows'),
  offset: queryInteger('offset', { minimum: 0, default: 0, description: 'Rows to skip; default 0.' }),
});

export const DeleteQuerySchema = z.object({
  id: uuidField().describe('The policyId (the PolicyGrant metadata.uid).'),
});

export const VerifyBodySchema = z
  .object({
    user: z.object({ id: uuidField().describe('The user whose access is verified.') }),
    item: z.object({ itemId: itemIdField().describe('The item.') }),
  })
  .meta({ id: 'VerifyRequest' });

export const PolicyRowSchema = z
  .object({
    policyId: z.string().describe('The grant id (PolicyGrant metadata.uid).'),
    itemId: z.string(),
    itemType: z.string(),
    ownerId: z.string().optional().describe('The item owner; absent when no single CatalogItem has itemId.'),
    status: PolicyGrantStateSchema,
    enforced: z
      .boolean()
      .describe(
        'Whether the policy is effective: the verdict the controller enforces (state, namespace, item, ' +
          'access types, conflicts). A policy the controller refuses is listed with its status, never as enforced.',
      ),
    enforcedReason: z
      .enum(WITHHELD_REASONS)
      .optional()
      .describe('Present when enforced is false: why (the reason of the PolicyGrant Enforced condition).'),
    constraints: ConstraintsSchema,
    expiryAt: z.string().describe('ISO 8601 UTC.'),
    consumerId: z.string().optional().describe('Provider listing, INDIVIDUAL grants: the consumer.'),
  })
  .meta({ id: 'PolicyRow' });

export const VerifyResultSchema = z
  .object({
    id: z.string().describe('The grant id.'),
    constraints: ConstraintsSchema,
    expiryAt: z.string().describe('ISO 8601 UTC.'),
  })
  .meta({ id: 'VerifyResult' });

export function responseSchemas(urn: UrnScheme) {
  return {
    created: successEnvelopeSchema(urn, {
      results: EnforcementReportSchema.partial().required({ policyId: true }),
      detail: true,
    }),
    // Results only with `Prefer: wait`: the spec's delete answer is an envelope without results.
    deleted: successEnvelopeSchema(urn, { detail: true }).extend({
      results: z.array(EnforcementReportSchema).optional(),
    }),
    listing: successEnvelopeSchema(urn, { results: PolicyRowSchema, paginated: true }),
    verified: successEnvelopeSchema(urn, { results: VerifyResultSchema }).extend(VerifyResultSchema.shape),
  };
}
