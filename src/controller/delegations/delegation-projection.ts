import type { Delegation, DelegationRelation, DelegationSpec } from '../../api/v1alpha1/index.js';
import type { Relationship } from '../../spicedb/client.js';
import { encodeObjectId } from '../../spicedb/object-id.js';
import type { Registry } from '../../spicedb/registry.js';
import { delegationWithdrawal } from '../../verdict/delegation-verdict.js';
import type { ProjectionRules } from '../projected/projection-rules.js';

export { DelegationReason, delegationWithdrawal } from '../../verdict/delegation-verdict.js';

// The pure projection of a Delegation onto SpiceDB relationships (schema.zed: resource#<relation>_delegate,
// agent#owner and its reverse user#agent, which the delegated_* permissions walk).

export const DELEGATED_OBJECT_TYPE = 'resource';
export const AGENT_OBJECT_TYPE = 'agent';
export const USER_OBJECT_TYPE = 'user';
export const AGENT_OWNER_RELATION = 'owner';
export const USER_AGENT_RELATION = 'agent';

const DELEGATION_RELATIONS: readonly DelegationRelation[] = ['viewer', 'editor', 'querier'];

function delegatedRelation(registry: Registry, relation: DelegationRelation): string {
  const target = registry.relationOfDelegation(relation);
  if (target === undefined) throw new Error(`the registry maps no delegation relation "${relation}"`);
  return target;
}

/**
 * What a delegation gives: `resource:<item>#<relation>_delegate@agent:<a>` expiring at expiryTime, and the
 * agent's ownership `agent:<a>#owner@user:<u>` with its reverse `user:<u>#agent@agent:<a>`, which the
 * delegated_* permissions walk (shared by every delegation of the agent). Ids are encoded (object-id.ts);
 * throws InvalidObjectIdError for an id that cannot be one.
 */
export function projectDelegation(
  spec: Pick<DelegationSpec, 'agentId' | 'ownerId' | 'itemId' | 'relation' | 'expiryTime'>,
  registry: Registry,
): Relationship[] {
  const agent = { type: AGENT_OBJECT_TYPE, id: encodeObjectId(spec.agentId) };
  const owner = { type: USER_OBJECT_TYPE, id: encodeObjectId(spec.ownerId) };
  return [
    {
      resource: { type: DELEGATED_OBJECT_TYPE, id: encodeObjectId(spec.itemId) },
      relation: delegatedRelation(registry, spec.relation),
      subject: agent,
      expiresAt: new Date(spec.expiryTime),
    },
    { resource: agent, relation: AGENT_OWNER_RELATION, subject: owner },
    { resource: owner, relation: USER_AGENT_RELATION, subject: agent },
  ];
}

/** The relations the Delegation controller is the only writer of: the resync manages exactly these for it. */
export function delegationRelations(registry: Registry) {
  return [
    ...DELEGATION_RELATIONS.map((relation) => ({
      objectType: DELEGATED_OBJECT_TYPE,
      relation: delegatedRelation(registry, relation),
    })),
    { objectType: AGENT_OBJECT_TYPE, relation: AGENT_OWNER_RELATION },
    { objectType: USER_OBJECT_TYPE, relation: USER_AGENT_RELATION },
  ];
}

export interface DelegationKindOptions {
  registry: Registry;
  /** The owner the agent's Agent object names, if there is one. */
  ownerOf(agentId: string): string | undefined;
  now?: () => Date;
}

export function delegationKind(options: DelegationKindOptions): ProjectionRules<Delegation> {
  const now = options.now ?? (() => new Date());
  return {
    name: 'delegation',
    relations: delegationRelations(options.registry),
    project: (delegation) => projectDelegation(delegation.spec, options.registry),
    withdrawal: (delegation) =>
      delegationWithdrawal(delegation, options.ownerOf(delegation.spec.agentId), now()),
    countsUntil: (delegation) => new Date(delegation.spec.expiryTime),
  };
}
