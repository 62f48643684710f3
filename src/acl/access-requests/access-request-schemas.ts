import { z } from 'zod';
import {
  AccessRequestAskSchema,
  AccessRequestSpecSchema,
  AccessRequestStateSchema,
} from '../../api/v1alpha1/index.js';
import { dateTimeField, uuidField } from '../../api/v1alpha1/field-schemas.js';
import { successEnvelopeSchema } from '../../http/envelope.js';
import type { UrnScheme } from '../../http/urn.js';
import { ListingQuerySchema } from '../policy-schemas.js';

// Request and response schemas of the access-request routes: they validate requests and describe the document.

const MAX_REASON_LENGTH = 1024;

const inTheFuture = (expiryTime: string | undefined) =>
  expiryTime === undefined || Date.parse(expiryTime) > Date.now();

export const CreateAccessRequestBodySchema = AccessRequestAskSchema.superRefine((body, ctx) => {
  if (!inTheFuture(body.expiryTime)) {
    ctx.addIssue({ code: 'custom', path: ['expiryTime'], message: 'expiryTime must be in the future' });
  }
}).meta({
  id: 'CreateAccessRequest',
  description:
    'Beyond the schema: expiryTime must be in the future when the request arrives, and each accessType ' +
    'appears at most once in access (else 400). The CatalogItem with the itemId decides the rest (else 400): ' +
    'itemType must be its itemType, and each accessType one of its accessTypes.',
});
export type CreateAccessRequestBody = z.output<typeof CreateAccessRequestBodySchema>;

export const DecideAccessRequestBodySchema = z
  .object({
    status: z
      .enum(['APPROVED', 'REJECTED', 'WITHDRAWN'])
      .describe('APPROVED or REJECTED by the item owner or an org_admin; WITHDRAWN by the consumer.'),
    reason: z.string().max(MAX_REASON_LENGTH).optional().describe('Why, for the other party.'),
    expiryTime: dateTimeField()
      .optional()
      .describe('APPROVED only: the expiry of the grant, instead of the one asked for.'),
  })
  .superRefine((body, ctx) => {
    if (body.expiryTime !== undefined && body.status !== 'APPROVED') {
      ctx.addIssue({ code: 'custom', path: ['expiryTime'], message: 'expiryTime is for APPROVED only' });
    }
    if (!inTheFuture(body.expiryTime)) {
      ctx.addIssue({ code: 'custom', path: ['expiryTime'], message: 'expiryTime must be in the future' });
    }
  })
  .meta({
    id: 'DecideAccessRequest',
    description: 'Beyond the schema: expiryTime must be in the future when the request arrives (else 400).',
    if: { properties: { status: { const: 'APPROVED' } } },
    else: { not: { required: ['expiryTime'] } },
  });
export type DecideAccessRequestBody = z.output<typeof DecideAccessRequestBodySchema>;

export const AccessRequestParamsSchema = z.object({
  id: uuidField().describe('The requestId (the AccessRequest metadata.uid).'),
});

export const IfMatchHeadersSchema = z.object({
  'if-match': z
    .string()
    .max(1024)
    .optional()
    .describe('Required: the ETag of the caller’s last read of the request (428 without, 412 when stale).'),
});

export const AccessRequestListingQuerySchema = ListingQuerySchema.extend({
  status: AccessRequestStateSchema.optional().describe('Only requests in this state.'),
});
export type AccessRequestListingQuery = z.output<typeof AccessRequestListingQuerySchema>;

export const AccessRequestRowSchema = z
  .object({
    requestId: z.string().describe('The AccessRequest metadata.uid.'),
    consumerId: z.string(),
    itemId: z.string(),
    itemType: z.string(),
    access: AccessRequestSpecSchema.shape.access,
    expiryTime: z.string().describe('ISO 8601 UTC: the expiry asked for.'),
    purpose: z.string().optional(),
    status: AccessRequestStateSchema,
    createdAt: z.string().describe('ISO 8601 UTC.'),
    decidedBy: z.string().optional(),
    decidedAt: z.string().optional().describe('ISO 8601 UTC.'),
    reason: z.string().optional(),
    policyIds: z.array(z.string()).describe('The policies an approval created; empty otherwise.'),
    etag: z.string().describe('The ETag of the request as listed: the If-Match of a decision on it.'),
  })
  .meta({ id: 'AccessRequestRow' });
export type AccessRequestRow = z.infer<typeof AccessRequestRowSchema>;

export const ETagHeadersSchema = z.object({
  etag: z.string().describe('The request’s version (its resourceVersion, quoted): If-Match of a PATCH.'),
});

export function accessRequestResponseSchemas(urn: UrnScheme) {
  return {
    created: successEnvelopeSchema(urn, {
      results: z.object({ requestId: z.string() }).meta({ id: 'CreatedAccessRequest' }),
    }),
    listing: successEnvelopeSchema(urn, { results: AccessRequestRowSchema, paginated: true }),
    one: successEnvelopeSchema(urn, { results: AccessRequestRowSchema }),
  };
}
