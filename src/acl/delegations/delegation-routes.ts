import type { Principal } from '../../auth/principal.js';
import { successEnvelope } from '../../http/envelope.js';
import type { RouteTable } from '../../http/openapi/route-table.js';
import { problemResponse } from '../../http/openapi/route-responses.js';
import type { UrnScheme } from '../../http/urn.js';
import type { AuditedRoutes, MutationAudit } from '../audit/audited-routes.js';
import type { WithSyncedCache } from '../memberships/membership-routes.js';
import type { Page } from '../policies/policy-rows.js';
import { COS_ADMIN } from '../authorisation.js';
import type { AgentOwnership } from './agents.js';
import {
  AgentParamsSchema,
  agentResponseSchemas,
  EnrolAgentBodySchema,
  CreateDelegationBodySchema,
  DelegationListingQuerySchema,
  DelegationParamsSchema,
  delegationResponseSchemas,
} from './delegation-schemas.js';
import type { Delegations } from './delegations.js';

const TAGS = ['delegations'];
const AGENT_TAGS = ['agents'];
/** Where a 201 names the delegation it created: its id, for the routes of `/delegations/{id}`. */
const CREATED_DELEGATION = '$response.body#/results/0/delegationId';

/** The audit of the two mutating delegation routes (docs/audit.md). */
export interface DelegationAudit {
  routes: AuditedRoutes;
  delegate: MutationAudit<{ body: { itemId: string } }>;
  undelegate: MutationAudit<{ params: { id: string } }>;
  enrolAgent: MutationAudit<{ params: { agentId: string } }>;
  deleteAgent: MutationAudit<{ params: { agentId: string } }>;
}

const unavailable = problemResponse('Kubernetes is unavailable; detail names it');
const notTheCallers = problemResponse(
  'The delegation is another user’s: only the delegating user may see or revoke it',
);
const unknown = problemResponse('No delegation has this id');

/** POST and GET /delegations, GET and DELETE /delegations/{id}: the delegating user's own delegations. */
export function addDelegationRoutes(
  table: RouteTable,
  services: { urn: UrnScheme; delegations: Delegations; agents: AgentOwnership },
  withSyncedCache: WithSyncedCache,
  audit: DelegationAudit,
): RouteTable {
  const { urn, delegations } = services;
  const { routes, delegate, undelegate } = audit;
  addAgentRoutes(table, services, withSyncedCache, audit);
  const schemas = delegationResponseSchemas(urn);
  return table
    .add(
      routes.wrap(delegate, {
        method: 'post',
        path: '/delegations',
        operationId: 'createDelegation',
        summary: 'Delegate access on an item to an agent',
        description:
          'The agent may then act as the caller on the item (POST /v1/check with subject_type agent and ' +
          'relation delegated_<relation>), only while the delegation is active AND the caller holds the ' +
          'access (viewer, editor; api for querier) too. The first delegation of an agent nobody holds makes ' +
          'the caller its owner; a delegation of an agent another user holds is a 409. A claimed agent is ' +
          'released when its owner has no active delegation of it left; one cos_admin enrolled is not. Delegating querier needs an active ' +
          'api policy on the item (else 403); viewer and editor are granted outside the ACL service, so only ' +
          'the check can tell, and it does.',
        tags: TAGS,
        access: 'authenticated',
        request: { body: CreateDelegationBodySchema },
        responses: {
          201: {
            description: 'Created; results: [{delegationId}]',
            schema: schemas.created,
            links: {
              GetDelegation: {
                operationId: 'getDelegation',
                parameters: { id: CREATED_DELEGATION },
                description: 'Read the delegation created',
              },
              DeleteDelegation: {
                operationId: 'deleteDelegation',
                parameters: { id: CREATED_DELEGATION },
                description: 'Revoke the delegation created',
              },
            },
          },
          403: problemResponse(
            'The caller is not a user, or holds no active api policy on the item (querier)',
          ),
          404: problemResponse('No CatalogItem has the itemId: delegations are for catalog items only'),
          409: problemResponse(
            'The agent belongs to another user (who still delegates to it, or to whom cos_admin enrolled it), ' +
              'or the caller reached a quota (ACL_MAX_DELEGATIONS_PER_USER, ACL_MAX_AGENTS_PER_USER; detail ' +
              'names it)',
          ),
          503: unavailable,
        },
        handler: withSyncedCache(async ({ principal, body }) => {
          const delegationId = await delegations.create(principal, body);
          return {
            status: 201,
            body: successEnvelope(urn, { title: 'Created', results: [{ delegationId }] }),
          };
        }),
      }),
    )
    .add({
      method: 'get',
      path: '/delegations',
      operationId: 'listDelegations',
      summary: 'The caller’s delegations, oldest first (creationTimestamp, then id)',
      tags: TAGS,
      access: 'authenticated',
      request: { query: DelegationListingQuerySchema },
      responses: {
        200: { description: 'A page of delegation rows', schema: schemas.listing },
        503: unavailable,
      },
      handler: withSyncedCache(({ principal, query }: { principal: Principal; query: Page }) => ({
        status: 200,
        body: successEnvelope(urn, { title: 'Delegations', ...delegations.list(principal, query) }),
      })),
    })
    .add({
      method: 'get',
      path: '/delegations/{id}',
      operationId: 'getDelegation',
      summary: 'One of the caller’s delegations',
      tags: TAGS,
      access: 'authenticated',
      request: { params: DelegationParamsSchema },
      responses: {
        200: { description: 'results: [the delegation row]', schema: schemas.one },
        403: notTheCallers,
        404: unknown,
        503: unavailable,
      },
      handler: withSyncedCache(({ principal, params }) => ({
        status: 200,
        body: successEnvelope(urn, { title: 'Delegation', results: [delegations.get(principal, params.id)] }),
      })),
    })
    .add(
      routes.wrap(undelegate, {
        method: 'delete',
        path: '/delegations/{id}',
        operationId: 'deleteDelegation',
        summary: 'Revoke a delegation (soft delete: the record stays, its status becomes DELETED)',
        description: 'Revoking a revoked delegation answers 204 too and changes nothing.',
        tags: TAGS,
        access: 'authenticated',
        request: { params: DelegationParamsSchema },
        responses: {
          204: { description: 'Revoked' },
          403: notTheCallers,
          404: unknown,
          503: unavailable,
        },
        handler: withSyncedCache(async ({ principal, params }) => {
          await delegations.revoke(principal, params.id);
          return { status: 204 };
        }),
      }),
    );
}

const agentUnknown = problemResponse('No Agent holds this agent id');

/** PUT and DELETE /agents/{agentId}: cos_admin settles who an agent acts for (docs/acl-delegations.md, "Agents"). */
function addAgentRoutes(
  table: RouteTable,
  services: { urn: UrnScheme; agents: AgentOwnership },
  withSyncedCache: WithSyncedCache,
  audit: DelegationAudit,
): void {
  const { urn, agents } = services;
  const { routes, enrolAgent, deleteAgent } = audit;
  const schemas = agentResponseSchemas(urn);
  table
    .add(
      routes.wrap(enrolAgent, {
        method: 'put',
        path: '/agents/{agentId}',
        operationId: 'enrolAgent',
        summary: 'Enrol an agent to a user, or transfer it (cos_admin)',
        description:
          'The agent acts for ownerId from now on and is not released when its delegations end. Every ' +
          'active delegation of the agent by another user is revoked. Role cos_admin.',
        tags: AGENT_TAGS,
        access: { role: COS_ADMIN },
        request: { params: AgentParamsSchema, body: EnrolAgentBodySchema },
        responses: {
          200: { description: 'results: [the agent]', schema: schemas.one },
          409: problemResponse('The agent changed while it was being enrolled: retry'),
          503: unavailable,
        },
        handler: withSyncedCache(async ({ params, body }) => {
          const agent = await agents.enrol(params.agentId, body.ownerId);
          return { status: 200, body: successEnvelope(urn, { title: 'Agent enrolled', results: [agent] }) };
        }),
      }),
    )
    .add(
      routes.wrap(deleteAgent, {
        method: 'delete',
        path: '/agents/{agentId}',
        operationId: 'deleteAgent',
        summary: 'Delete an agent and revoke its delegations (cos_admin)',
        description:
          'The agent acts for nobody until a user delegates to it again (or cos_admin enrols it). Role cos_admin.',
        tags: AGENT_TAGS,
        access: { role: COS_ADMIN },
        request: { params: AgentParamsSchema },
        responses: { 204: { description: 'Deleted' }, 404: agentUnknown, 503: unavailable },
        handler: withSyncedCache(async ({ params }) => {
          await agents.remove(params.agentId);
          return { status: 204 };
        }),
      }),
    );
}
