import { z } from 'zod';
import { agentIdField, ConditionStatusSchema } from '../../api/v1alpha1/index.js';
import { itemIdField, typeNameField, uuidField } from '../../api/v1alpha1/field-schemas.js';
import { successEnvelopeSchema } from '../../http/envelope.js';
import type { UrnScheme } from '../../http/urn.js';
import { ExplainReason } from '../../verdict/explanation.js';

// The request and answer of GET /explain: they validate requests and describe the document.

export const ExplainQuerySchema = z
  .object({
    userId: uuidField()
      .optional()
      .describe('The user whose access is explained; name exactly one of userId and agentId.'),
    agentId: agentIdField()
      .optional()
      .describe('The agent whose access is explained; name exactly one of userId and agentId.'),
    itemId: itemIdField().describe('The item.'),
    accessType: typeNameField().describe('The access type, for example api.'),
  })
  .superRefine((query, ctx) => {
    if ((query.userId === undefined) === (query.agentId === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['userId'], message: 'name exactly one of userId and agentId' });
    }
  })
  .meta({ description: 'Exactly one of userId and agentId.' });
export type ExplainQuery = z.output<typeof ExplainQuerySchema>;

const SubjectSchema = z.object({ type: z.enum(['user', 'agent']), id: z.string() });

const EnforcementSchema = z
  .object({
    status: ConditionStatusSchema,
    reason: z.string(),
    message: z.string(),
    observedGeneration: z.int().optional(),
    generation: z.int().optional(),
    current: z.boolean().describe('The condition was set from the object’s current metadata.generation.'),
  })
  .describe('The object’s Enforced condition: whether SpiceDB holds what the object gives.')
  .meta({ id: 'Enforcement' });

const ExplainedObjectFields = {
  kind: z.enum(['CatalogItem', 'Namespace', 'PolicyGrant', 'Membership', 'Delegation']),
  ref: z
    .string()
    .describe('`namespace/name`, the name of a cluster-scoped object, or empty when it is missing.'),
  policyId: z.string().optional().describe('A PolicyGrant’s metadata.uid.'),
  effective: z
    .boolean()
    .describe(
      'Whether the object counts towards allowing, by the verdict the controller enforces; false for a ' +
        'Membership of an organisation the caller does not administer (reason Undisclosed), whatever it says.',
    ),
  reason: z.enum(Object.values(ExplainReason) as [ExplainReason, ...ExplainReason[]]),
  message: z.string(),
  enforcement: EnforcementSchema.optional(),
};

const ExplanationFields = {
  subject: SubjectSchema,
  itemId: z.string(),
  accessType: z.string(),
  allowed: z.boolean().describe('The verdict of the record: what is enforced once the controller has acted.'),
  enforced: z.boolean().describe('What the objects’ Enforced conditions say SpiceDB holds now.'),
  disagreement: z.string().optional().describe('Present when allowed and enforced differ.'),
  message: z.string(),
};

/** A delegation's owner is a user, whose explanation names no delegation: one level of nesting. */
const OwnerExplanationSchema = z
  .object({ ...ExplanationFields, objects: z.array(z.object(ExplainedObjectFields)) })
  .meta({ id: 'OwnerExplanation' });

export const ExplanationSchema = z
  .object({
    ...ExplanationFields,
    objects: z.array(
      z
        .object({
          ...ExplainedObjectFields,
          owner: OwnerExplanationSchema.optional().describe('A delegation’s owner’s own access.'),
        })
        .meta({ id: 'ExplainedObject' }),
    ),
  })
  .meta({ id: 'Explanation' });

export function explainResponseSchemas(urn: UrnScheme) {
  return { explained: successEnvelopeSchema(urn, { results: ExplanationSchema, detail: true }) };
}
