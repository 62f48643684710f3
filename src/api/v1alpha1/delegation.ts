import { createHash } from 'node:crypto';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { z } from 'zod';
import { dateTimeField, itemIdField, uuidField } from './field-schemas.js';
import type { AGENT_KIND, DELEGATION_KIND, GROUP_VERSION } from './group-version.js';
import { projectedStatusFields } from './status-fields.js';

const MAX_AGENT_ID_LENGTH = 256;

/** Agent ids come from the platforms that run agents: any short non-empty id (encoded for SpiceDB). */
export const agentIdField = () => z.string().min(1).max(MAX_AGENT_ID_LENGTH);

export const DelegationRelationSchema = z
  .enum(['viewer', 'editor', 'querier'])
  .describe('What the agent may do for its owner: viewer, editor, or querier (the api access type).');
export type DelegationRelation = z.infer<typeof DelegationRelationSchema>;

export const DelegationSpecSchema = z
  .object({
    agentId: agentIdField().describe('Id of the agent the access is delegated to.'),
    ownerId: uuidField().describe('UUID of the delegating user, the only owner of the agent.'),
    itemId: itemIdField().describe('Identifier of the catalog item the delegation is on (URN-shaped).'),
    relation: DelegationRelationSchema,
    expiryTime: dateTimeField().describe('When the delegation expires; SpiceDB stops honouring it then.'),
    revokedAt: dateTimeField()
      .optional()
      .describe(
        'When the delegation was revoked (soft delete): the object stays as a record and gives nothing.',
      ),
  })
  .describe(
    'A delegation of access to an agent: the agent may act on the item as its owner, but only while the owner holds the access (viewer, editor, api) too.',
  );
export type DelegationSpec = z.infer<typeof DelegationSpecSchema>;

export const DelegationStatusSchema = z
  .object(projectedStatusFields('delegation'))
  .describe('What the controller observed and did; written by the controller only.');
export type DelegationStatus = z.infer<typeof DelegationStatusSchema>;

/** A Delegation object as the Kubernetes API serves it. */
export interface Delegation {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof DELEGATION_KIND;
  metadata: V1ObjectMeta;
  spec: DelegationSpec;
  status?: DelegationStatus;
}

export const AgentSpecSchema = z
  .object({
    agentId: agentIdField().describe('Id of the agent.'),
    ownerId: uuidField().describe(
      'UUID of the one user the agent acts for; set by its first delegation, or by cos_admin (enrolment).',
    ),
    enrolled: z
      .boolean()
      .optional()
      .describe(
        'Set when cos_admin enrolled or transferred the agent: it stays its owner’s when the owner’s ' +
          'delegations end. An agent claimed by a first delegation (not enrolled) is released once its owner ' +
          'has no active delegation of it.',
      ),
  })
  .describe('An agent and its owner: an agent acts for exactly one user.');
export type AgentSpec = z.infer<typeof AgentSpecSchema>;

/** An Agent object: the claim of ownership that makes one owner per agent race-free (one name per agent). */
export interface Agent {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof AGENT_KIND;
  metadata: V1ObjectMeta;
  spec: AgentSpec;
}

/**
 * The object name of an agent: deterministic from its id, so that two first delegations of one agent meet on
 * one object and the apiserver lets only one create it. A hash, because agent ids need not be valid names.
 */
export function agentName(agentId: string): string {
  return `agent-${createHash('sha256').update(agentId).digest('hex').slice(0, 40)}`;
}

export type DelegationState = 'ACTIVE' | 'DELETED' | 'EXPIRED';

/** DELETED once revoked, else EXPIRED once `now` reaches expiryTime (or it does not parse), else ACTIVE. */
export function delegationState(
  spec: Pick<DelegationSpec, 'expiryTime' | 'revokedAt'>,
  now: Date,
): DelegationState {
  if (spec.revokedAt !== undefined) return 'DELETED';
  return Date.parse(spec.expiryTime) > now.getTime() ? 'ACTIVE' : 'EXPIRED';
}
