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

export function mutationAudits(cache: AclCache) {
  const organisationOfItem = (itemId: string) => cache.itemsWithId(itemId)[0]?.spec.organisationId;
  const itemTarget = (itemId: string): AuditTarget =>
    withOrganisation({ kind: 'item', id: itemId, itemId }, organisationOfItem(itemId));
  const policyTarget = (policyId: string, itemId = cache.grantByUid(policyId)?.spec.itemId): AuditTarget =>
    itemId === undefined
      ? { kind: 'policy', id: policyId }
      : withOrganisation({ kind: 'policy', id: policyId, itemId }, organisationOfItem(itemId));
  const revoked = (policyId: unknown): ActionDescription[] => [
    { action: ACTIONS.policyRevoked, target: policyTarget(String(policyId ?? '')) },
  ];

  const create: MutationAudit<CreateInput> = {
    completed: ({ body }, result) =>
      ((result.body as Envelope).results ?? []).map((created, index) => ({
        action: ACTIONS.policyCreated,
        target: policyTarget(String(created.policyId), body.request[index]?.itemId),
        ...(isReplayed(result) ? { detail: REPLAY_DETAIL } : {}),
      })),
    attempted: ({ body }) =>
      requestedItems(body).map((itemId) => ({ action: ACTIONS.policyCreated, target: itemTarget(itemId) })),
  };
  const revoke: MutationAudit<DeleteInput> = {
    completed: ({ query }) => revoked(query.id),
    attempted: ({ query }) => revoked(query.id),
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
  const delegationTarget = (
    delegationId: string,
    itemId = cache.delegationByUid(delegationId)?.spec.itemId,
  ): AuditTarget =>
    itemId === undefined
      ? { kind: 'delegation', id: delegationId }
      : withOrganisation({ kind: 'delegation', id: delegationId, itemId }, organisationOfItem(itemId));
  const delegate: MutationAudit<DelegationCreateInput> = {
    completed: ({ body }, result) =>
      ((result.body as Envelope).results ?? []).map((created) => ({
        action: ACTIONS.delegationCreated,
        target: delegationTarget(String(created.delegationId), body.itemId),
      })),
    attempted: ({ body }) => {
      const itemId = (body as { itemId?: unknown } | undefined)?.itemId;
      const target = typeof itemId === 'string' ? itemTarget(itemId) : { kind: 'delegation', id: '*' };
      return [{ action: ACTIONS.delegationCreated, target }];
    },
  };
  const undelegate: MutationAudit<DelegationInput> = {
    completed: ({ params }) => [{ action: ACTIONS.delegationRevoked, target: delegationTarget(params.id) }],
    attempted: ({ params }) => [
      { action: ACTIONS.delegationRevoked, target: delegationTarget(String(params.id ?? '')) },
    ],
  };
  const enrolAgent = agentAudit(ACTIONS.agentEnrolled);
  const deleteAgent = agentAudit(ACTIONS.agentDeleted);
  const requestTarget = (
    requestId: string,
    itemId = cache.accessRequestByUid(requestId)?.spec.itemId,
  ): AuditTarget =>
    itemId === undefined
      ? { kind: 'accessrequest', id: requestId }
      : withOrganisation({ kind: 'accessrequest', id: requestId, itemId }, organisationOfItem(itemId));
  const ask: MutationAudit<AccessRequestAskInput> = {
    completed: ({ body }, result) =>
      ((result.body as Envelope).results ?? []).map((created) => ({
        action: ACTIONS.accessRequestCreated,
        target: requestTarget(String(created.requestId), body.itemId),
      })),
    attempted: ({ body }) => {
      const itemId = (body as { itemId?: unknown } | undefined)?.itemId;
      const target = typeof itemId === 'string' ? itemTarget(itemId) : { kind: 'accessrequest', id: '*' };
      return [{ action: ACTIONS.accessRequestCreated, target }];
    },
  };
  /** The decision, and for an approval one policy.created per grant it made. */
  const decide: MutationAudit<AccessRequestDecideInput> = {
    completed: ({ params, body }, result) => {
      const [decided] = (result.body as Envelope).results ?? [];
      const itemId = cache.accessRequestByUid(params.id)?.spec.itemId;
      return [
        { action: decisionAction(body.status), target: requestTarget(params.id) },
        ...(decided?.policyIds ?? []).map((policyId) => ({
          action: ACTIONS.policyCreated,
          target: policyTarget(policyId, itemId),
        })),
      ];
    },
    attempted: ({ params, body }) => [
      {
        action: decisionAction((body as { status?: unknown } | undefined)?.status),
        target: requestTarget(String(params.id ?? '')),
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
