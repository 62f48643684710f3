import { z } from 'zod';
import { agentIdField, DelegationRelationSchema, DelegationSpecSchema } from '../../api/v1alpha1/index.js';
import { uuidField } from '../../api/v1alpha1/field-schemas.js';
import { successEnvelopeSchema } from '../../http/envelope.js';
import type { UrnScheme } from '../../http/urn.js';
import { ListingQuerySchema } from '../policy-schemas.js';

// Request and response schemas of the delegation routes: they validate requests and describe the document.

export const CreateDelegationBodySchema = DelegationSpecSchema.pick({
  agentId: true,
  itemId: true,
  relation: true,
  expiryTime: true,
})
  .superRefine((body, ctx) => {
    if (!(Date.parse(body.expiryTime) > Date.now())) {
      ctx.addIssue({ code: 'custom', path: ['expiryTime'], message: 'expiryTime must be in the future' });
    }
  })
  .meta({
    id: 'CreateDelegationRequest',
    description: 'Beyond the schema: expiryTime must be in the future when the request arrives (else 400).',
  });
export type CreateDelegationBody = z.output<typeof CreateDelegationBodySchema>;

export const DelegationParamsSchema = z.object({
  id: uuidField().describe('The delegationId (the Delegation metadata.uid).'),
});

export const DelegationListingQuerySchema = ListingQuerySchema.pick({ limit: true, offset: true });

export const DelegationRowSchema = z
  .object({
    delegationId: z.string().describe('The Delegation metadata.uid.'),
    agentId: agentIdField(),
    itemId: z.string(),
    relation: DelegationRelationSchema,
    status: z
      .enum(['ACTIVE', 'DELETED', 'EXPIRED'])
      .describe('Derived: DELETED once revoked, EXPIRED once past expiryTime, else ACTIVE.'),
    enforced: z
      .boolean()
      .describe('Whether the controller reports the delegation written to SpiceDB (Enforced=True).'),
    expiryAt: z.string().describe('ISO 8601 UTC.'),
    revokedAt: z.string().optional(),
  })
  .meta({ id: 'DelegationRow' });
export type DelegationRow = z.infer<typeof DelegationRowSchema>;

export function delegationResponseSchemas(urn: UrnScheme) {
  return {
    created: successEnvelopeSchema(urn, {
      results: z.object({ delegationId: z.string() }).meta({ id: 'CreatedDelegation' }),
    }),
    listing: successEnvelopeSchema(urn, { results: DelegationRowSchema, paginated: true }),
    one: successEnvelopeSchema(urn, { results: DelegationRowSchema }),
  };
}

export const AgentParamsSchema = z.object({
  agentId: agentIdField().describe('The agent id (URL-encoded in the path).'),
});

export const EnrolAgentBodySchema = z
  .object({ ownerId: uuidField().describe('UUID of the user the agent is to act for.') })
  .meta({ id: 'EnrolAgentRequest' });

export const AgentRowSchema = z
  .object({
    agentId: agentIdField(),
    ownerId: z.string().describe('UUID of the one user the agent acts for.'),
    enrolled: z
      .boolean()
      .describe('True when cos_admin enrolled the agent: it is not released when its delegations end.'),
  })
  .meta({ id: 'AgentRow' });

export function agentResponseSchemas(urn: UrnScheme) {
  return { one: successEnvelopeSchema(urn, { results: AgentRowSchema }) };
}
