import type { MembershipKey } from '../../api/v1alpha1/index.js';
import type { AuditTarget } from '../../audit/audit-record.js';
import type { AclCache } from '../acl-cache.js';
import { membershipChange, type MemberEvent } from '../memberships/cloud-events.js';
import type { MutationAudit } from './audited-routes.js';
import { isReplayed, REPLAY_DETAIL } from './replayed-results.js';
import type { ActionDescription } from './mutation-auditor.js';

// What each mutating route of the ACL API records (docs/audit.md, "What is recorded").

export const ACTIONS = {
  policyCreated: 'policy.created',
  policyRevoked: 'policy.revoked',
  membershipAdded: 'membership.added',
  membershipRemoved: 'membership.removed',
  membershipEvents: 'membership.events',
  membersReplaced: 'membership.replaced',
  delegationCreated: 'delegation.created',
  delegationRevoked: 'delegation.revoked',
  agentEnrolled: 'agent.enrolled',
  agentDeleted: 'agent.deleted',
  accessRequestCreated: 'accessrequest.created',
  accessRequestApproved: 'accessrequest.approved',
  accessRequestRejected: 'accessrequest.rejected',
  accessRequestWithdrawn: 'accessrequest.withdrawn',
} as const;

const DECISION_ACTIONS: Record<string, string> = {
  APPROVED: ACTIONS.accessRequestApproved,
  REJECTED: ACTIONS.accessRequestRejected,
  WITHDRAWN: ACTIONS.accessRequestWithdrawn,
};

interface CreateInput {
  body: { request: readonly { itemId: string }[] };
}
interface DeleteInput {
  query: { id: string };
}
interface EventsInput {
  body: MemberEvent | MemberEvent[];
}
interface DelegationCreateInput {
  body: { itemId: string };
}
interface DelegationInput {
  params: { id: string };
}
interface AgentInput {
  params: { agentId: string };
}
interface AccessRequestAskInput {
  body: { itemId: string };
}
interface AccessRequestDecideInput {
  params: { id: string };
  body: { status: string };
}
interface SnapshotInput {
  params: { organisationId: string; groupId?: string };
}

interface Envelope {
  results?: readonly {
    policyId?: string;
    delegationId?: string;
    requestId?: string;
    policyIds?: string[];
    outcome?: string;
  }[];
}

/**
 * What the cache tells about a target beyond what the request named. A refused request (403) gets none: its
 * record is among its actor's own in GET /audit, and an item's organisation there would tell an item that exists
 * from one that does not ("A refusal tells nothing", docs/audit.md).
 */
interface TargetFacts {
  organisationOfItem(itemId: string): string | undefined;
  itemOfGrant(policyId: string): string | undefined;
  itemOfDelegation(delegationId: string): string | undefined;
  itemOfAccessRequest(requestId: string): string | undefined;
}

const NO_FACTS: TargetFacts = {
  organisationOfItem: () => undefined,
  itemOfGrant: () => undefined,
  itemOfDelegation: () => undefined,
  itemOfAccessRequest: () => undefined,
};

function cachedFacts(cache: AclCache): TargetFacts {
  return {
    organisationOfItem: (itemId) => cache.itemsWithId(itemId)[0]?.spec.organisationId,
    itemOfGrant: (policyId) => cache.grantByUid(policyId)?.spec.itemId,
    itemOfDelegation: (delegationId) => cache.delegationByUid(delegationId)?.spec.itemId,
    itemOfAccessRequest: (requestId) => cache.accessRequestByUid(requestId)?.spec.itemId,
  };
}

/** The targets of the routes' records, with the facts `facts` gives. */
function targetsOf(facts: TargetFacts) {
  const onItem = (target: AuditTarget, itemId: string | undefined): AuditTarget =>
    itemId === undefined ? target : withOrganisation({ ...target, itemId }, facts.organisationOfItem(itemId));
  return {
    item: (itemId: string): AuditTarget => onItem({ kind: 'item', id: itemId }, itemId),
    policy: (policyId: string, itemId = facts.itemOfGrant(policyId)): AuditTarget =>
      onItem({ kind: 'policy', id: policyId }, itemId),
    delegation: (delegationId: string, itemId = facts.itemOfDelegation(delegationId)): AuditTarget =>
      onItem({ kind: 'delegation', id: delegationId }, itemId),
    accessRequest: (requestId: string, itemId = facts.itemOfAccessRequest(requestId)): AuditTarget =>
      onItem({ kind: 'accessrequest', id: requestId }, itemId),
  };
}

export type AuditTargets = ReturnType<typeof targetsOf>;

/** The targets of a request's records: with what the cache knows, or, refused, with what the request named. */
export function auditTargets(cache: AclCache): (attempt: { refused: boolean }) => AuditTargets {
  const known = targetsOf(cachedFacts(cache));
  const named = targetsOf(NO_FACTS);
  return ({ refused }) => (refused ? named : known);
}

export function mutationAudits(cache: AclCache) {
  const targetsFor = auditTargets(cache);
  const known = targetsFor({ refused: false });
  const revoked = (policyId: unknown, targets: AuditTargets): ActionDescription[] => [
    { action: ACTIONS.policyRevoked, target: targets.policy(String(policyId ?? '')) },
  ];

  const create: MutationAudit<CreateInput> = {
    completed: ({ body }, result) =>
      ((result.body as Envelope).results ?? []).map((created, index) => ({
        action: ACTIONS.policyCreated,
        target: known.policy(String(created.policyId), body.request[index]?.itemId),
        ...(isReplayed(result) ? { detail: REPLAY_DETAIL } : {}),
      })),
    attempted: (attempt) =>
      requestedItems(attempt.body).map((itemId) => ({
        action: ACTIONS.policyCreated,
        target: targetsFor(attempt).item(itemId),
      })),
  };
  const revoke: MutationAudit<DeleteInput> = {
    completed: ({ query }) => revoked(query.id, known),
    attempted: (attempt) => revoked(attempt.query.id, targetsFor(attempt)),
  };
  const events: MutationAudit<EventsInput> = {
    completed: ({ body }, result) => {
      const outcomes = (result.body as Envelope).results ?? [];
      return eventList(body).map((event, index) => ({
        ...eventAction(event),
        ...(outcomes[index]?.outcome ? { detail: outcomes[index].outcome } : {}),
      }));
    },
    attempted: ({ body }) =>
      body === undefined
        ? [{ action: ACTIONS.membershipEvents, target: { kind: 'membership', id: '*' } }]
        : eventList(body as MemberEvent | MemberEvent[]).map(eventAction),
  };
  const snapshot: MutationAudit<SnapshotInput> = {
    completed: ({ params }) => [snapshotAction(params)],
    attempted: ({ params }) => [snapshotAction(params as SnapshotInput['params'])],
  };
  const delegate: MutationAudit<DelegationCreateInput> = {
    completed: ({ body }, result) =>
      ((result.body as Envelope).results ?? []).map((created) => ({
        action: ACTIONS.delegationCreated,
        target: known.delegation(String(created.delegationId), body.itemId),
      })),
    attempted: (attempt) => {
      const itemId = (attempt.body as { itemId?: unknown } | undefined)?.itemId;
      const target =
        typeof itemId === 'string' ? targetsFor(attempt).item(itemId) : { kind: 'delegation', id: '*' };
      return [{ action: ACTIONS.delegationCreated, target }];
    },
  };
  const undelegate: MutationAudit<DelegationInput> = {
    completed: ({ params }) => [{ action: ACTIONS.delegationRevoked, target: known.delegation(params.id) }],
    attempted: (attempt) => [
      {
        action: ACTIONS.delegationRevoked,
        target: targetsFor(attempt).delegation(String(attempt.params.id ?? '')),
      },
    ],
  };
  const enrolAgent = agentAudit(ACTIONS.agentEnrolled);
  const deleteAgent = agentAudit(ACTIONS.agentDeleted);
  const ask: MutationAudit<AccessRequestAskInput> = {
    completed: ({ body }, result) =>
      ((result.body as Envelope).results ?? []).map((created) => ({
        action: ACTIONS.accessRequestCreated,
        target: known.accessRequest(String(created.requestId), body.itemId),
      })),
    attempted: (attempt) => {
      const itemId = (attempt.body as { itemId?: unknown } | undefined)?.itemId;
      const target =
        typeof itemId === 'string' ? targetsFor(attempt).item(itemId) : { kind: 'accessrequest', id: '*' };
      return [{ action: ACTIONS.accessRequestCreated, target }];
    },
  };
  /** The decision, and for an approval one policy.created per grant it made. */
  const decide: MutationAudit<AccessRequestDecideInput> = {
    completed: ({ params, body }, result) => {
      const [decided] = (result.body as Envelope).results ?? [];
      const itemId = cache.accessRequestByUid(params.id)?.spec.itemId;
      return [
        { action: decisionAction(body.status), target: known.accessRequest(params.id) },
        ...(decided?.policyIds ?? []).map((policyId) => ({
          action: ACTIONS.policyCreated,
          target: known.policy(policyId, itemId),
        })),
      ];
    },
    attempted: (attempt) => [
      {
        action: decisionAction((attempt.body as { status?: unknown } | undefined)?.status),
        target: targetsFor(attempt).accessRequest(String(attempt.params.id ?? '')),
      },
    ],
  };
  return { create, revoke, events, snapshot, delegate, undelegate, enrolAgent, deleteAgent, ask, decide };
}

/** An unknown or missing status is recorded as a decision attempted, naming none. */
function decisionAction(status: unknown): string {
  return DECISION_ACTIONS[String(status)] ?? 'accessrequest.decided';
}

/** An agent route's one action, on the agent of the path. */
function agentAudit(action: string): MutationAudit<AgentInput> {
  const record = (agentId: unknown): ActionDescription[] => [
    { action, target: { kind: 'agent', id: String(agentId ?? '') } },
  ];
  return {
    completed: ({ params }) => record(params.agentId),
    attempted: ({ params }) => record(params.agentId),
  };
}

function withOrganisation(target: AuditTarget, organisationId: string | undefined): AuditTarget {
  return organisationId === undefined ? target : { ...target, organisationId };
}

function requestedItems(body: unknown): string[] {
  const request = (body as { request?: unknown } | undefined)?.request;
  if (!Array.isArray(request)) return [];
  return request.map((item) => String((item as { itemId?: unknown }).itemId ?? ''));
}

function eventList(body: MemberEvent | MemberEvent[]): MemberEvent[] {
  return Array.isArray(body) ? body : [body];
}

function eventAction(event: MemberEvent): ActionDescription {
  const change = membershipChange(event);
  return {
    action: change.member ? ACTIONS.membershipAdded : ACTIONS.membershipRemoved,
    target: membershipTarget(change.key),
  };
}

function membershipTarget(key: MembershipKey): AuditTarget {
  const group = key.groupId === undefined ? '' : `/groups/${key.groupId}`;
  return {
    kind: 'membership',
    id: `${key.organisationId}${group}/members/${key.userId}`,
    organisationId: key.organisationId,
  };
}

function snapshotAction(params: { organisationId: string; groupId?: string }): ActionDescription {
  const group = params.groupId === undefined ? '' : `/${params.groupId}`;
  return {
    action: ACTIONS.membersReplaced,
    target: {
      kind: params.groupId === undefined ? 'organisation' : 'group',
      id: `${params.organisationId}${group}`,
      organisationId: params.organisationId,
    },
  };
}
