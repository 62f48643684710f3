import { z } from 'zod';
import { decodeCursor } from '../../audit/audit-cursor.js';
import { BREAK_REASONS } from '../../audit/chain-verifier.js';
import { successEnvelopeSchema } from '../../http/envelope.js';
import type { UrnScheme } from '../../http/urn.js';
import { listingLimit } from '../policy-schemas.js';

// The request and response schemas of GET /audit, /audit/export and /audit/verify.

const instant = (name: string) =>
  z.iso
    .datetime({ offset: true, error: `${name} must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z` })
    .transform((text) => new Date(text));

// PostgreSQL text cannot hold a NUL character: a filter with one is bad input (400), not a failed query (503).
const text = (description: string) =>
  z
    .string()
    .min(1)
    .max(512)
    // A pattern, not a refinement, so that the document states the rule; NUL is the one character matched on purpose.
    // eslint-disable-next-line no-control-regex
    .regex(/^[^\u0000]*$/, 'must not contain a NUL character')
    .optional()
    .describe(description);

const TimeRangeShape = {
  from: instant('from').optional().describe('Records at or after this time (ISO 8601).'),
  to: instant('to')
    .optional()
    .describe('Records before this time (ISO 8601); later than from when both are given.'),
};

// Zod runs an object's refinement even when a field failed its own schema: such a field still holds the text
// it was given (e.g. `to=null`), and its own issue is already reported, so only two parsed dates are compared.
function orderedRange<T extends { from?: Date | undefined; to?: Date | undefined }>(
  range: T,
  ctx: z.RefinementCtx,
) {
  const { from, to } = range as { from?: unknown; to?: unknown };
  if (from instanceof Date && to instanceof Date && from.getTime() >= to.getTime()) {
    ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must be later than from' });
  }
}

export const TimeRangeQuerySchema = z.object(TimeRangeShape).superRefine(orderedRange);

export const AuditQuerySchema = z
  .object({
    actor: text('Only actions of this actor id (a user id, or an application client id).'),
    action: text('Only this action, e.g. policy.created.'),
    itemId: text('Only actions on this item.'),
    policyId: text('Only actions on this policy.'),
    ...TimeRangeShape,
    limit: listingLimit('Records'),
    cursor: z
      .string()
      .max(256)
      .refine((value) => decodeCursor(value) !== undefined, 'cursor must be a nextCursor this API returned')
      .optional()
      .describe("The previous page's nextCursor, as returned (opaque: any other value is a 400)."),
  })
  .superRefine(orderedRange);

export const AuditRecordSchema = z
  .object({
    id: z.string().describe('Consecutive from the first record: a gap shows a deleted record.'),
    time: z.string().describe('ISO 8601 UTC, from PostgreSQL.'),
    actor: z.object({ type: z.enum(['user', 'application', 'kubernetes']), id: z.string() }),
    action: z.string().describe('e.g. policy.created, policy.revoked, membership.added.'),
    target: z.object({
      kind: z.string(),
      id: z.string(),
      itemId: z.string().optional(),
      organisationId: z.string().optional().describe("The item's or membership's organisation."),
    }),
    outcome: z.object({
      status: z.int().describe('The HTTP status of the answer.'),
      detail: z.string().optional(),
    }),
    requestId: z.string(),
    prevHash: z.string().describe('The hash of the previous record (64 zeros before the first).'),
    hash: z.string().describe('SHA-256 (hex) of the canonical JSON of the record without hash.'),
  })
  .meta({ id: 'AuditRecord' });

export const ChainReportSchema = z
  .object({
    valid: z.boolean(),
    checked: z.int().describe('Records checked.'),
    keyed: z
      .boolean()
      .describe("Whether each record's MAC under the chain key was checked (the API has AUDIT_CHAIN_KEY)."),
    firstId: z.string().optional(),
    lastId: z.string().optional(),
    breaks: z
      .array(
        z.object({
          id: z.string().describe('The record at which the chain stops holding.'),
          reason: z.enum(BREAK_REASONS),
          detail: z.string(),
        }),
      )
      .describe('Where the chain breaks, oldest first (at most 100).'),
  })
  .meta({ id: 'AuditChainReport' });

export function auditResponseSchemas(urn: UrnScheme) {
  return {
    page: successEnvelopeSchema(urn, { results: AuditRecordSchema }).extend({
      nextCursor: z.string().optional().describe('Absent on the last page.'),
    }),
    verified: successEnvelopeSchema(urn, { results: ChainReportSchema }),
  };
}
