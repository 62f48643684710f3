import { markReplayed } from './audit/replayed-results.js';
import { successEnvelope } from '../http/envelope.js';
import { HttpError } from '../http/errors.js';
import type { ApiAuthentication } from '../http/openapi/route-definition.js';
import { RouteTable } from '../http/openapi/route-table.js';
import { problemResponse } from '../http/openapi/route-responses.js';
import { chargeWork } from '../http/rate-limit/subject-rate-limit.js';
import type { UrnScheme } from '../http/urn.js';
import type { AclCache } from './acl-cache.js';
import {
  CreateBodySchema,
  CreateHeadersSchema,
  DeleteQuerySchema,
  PreferHeadersSchema,
  ListingQuerySchema,
  VerifyBodySchema,
  responseSchemas,
} from './policy-schemas.js';
import { COS_ADMIN, ORG_ADMIN } from './authorisation.js';
import type { PolicyCreator } from './policies/create-policies.js';
import { awaitEnforcement, waitPreference, type WaitTarget } from './policies/enforcement-wait.js';
import type { ReplicaConfirmations } from './decision-replicas/replica-confirmations.js';
import { KUBERNETES_DEPENDENCY, kubernetesFailure } from './kube-errors.js';
import { addAccessRequestRoutes } from './access-requests/access-request-routes.js';
import type { AccessRequests } from './access-requests/access-requests.js';
import { addDelegationRoutes } from './delegations/delegation-routes.js';
import type { Delegations } from './delegations/delegations.js';
import type { AgentOwnership } from './delegations/agents.js';
import { listingRoutes } from './listing-route.js';
import { addMembershipRoutes, type MembershipServices } from './memberships/membership-routes.js';
import type { PolicyListings } from './policies/list-policies.js';
import type { PolicyRevoker } from './policies/revoke-policy.js';
import type { AccessVerifier } from './policies/verify-access.js';
import { addAuditRoutes, type AuditReadServices } from './audit/audit-routes.js';
import type { AuditedRoutes } from './audit/audited-routes.js';
import { mutationAudits } from './audit/mutation-audits.js';
import { addExplainRoute } from './explain/explain-route.js';
import type { Explainer } from './explain/explainer.js';

export interface AclServices {
  urn: UrnScheme;
  cache: AclCache;
  creator: PolicyCreator;
  revoker: PolicyRevoker;
  listings: PolicyListings;
  verifier: AccessVerifier;
  memberships: Omit<MembershipServices, 'urn' | 'cache'>;
  delegations: Delegations;
  agents: AgentOwnership;
  accessRequests: AccessRequests;
  explainer: Explainer;
  /** Records every mutating route's actions (docs/audit.md). */
  audited: AuditedRoutes;
  /** Every Ready decision replica confirms a change before `Prefer: wait` reports it enforced; absent: none asked. */
  replicaConfirmations?: Pick<ReplicaConfirmations, 'confirm'>;
  auditReads: AuditReadServices;
}

export interface AclRouteOptions {
  authentication: ApiAuthentication;
  validateResponses?: boolean;
}

const TAGS = ['policies'];

const unavailable = problemResponse('Kubernetes is unavailable; detail names it');

function count(n: number, what: string): string {
  return `${n} ${n === 1 ? 'policy' : 'policies'} ${what}`;
}

/** The routes of the ACL API, each declared once: validation, handler, and its OpenAPI operation. */
export function aclRoutes(services: AclServices, options: AclRouteOptions): RouteTable {
  const { urn, creator, revoker, listings, verifier, audited } = services;
  const audits = mutationAudits(services.cache);
  const schemas = responseSchemas(urn);
  const guarded = guard(services.cache);
  const listing = listingRoutes({
    urn,
    guarded,
    tags: TAGS,
    query: ListingQuerySchema,
    page: { description: 'A page of policy rows', schema: schemas.listing },
    title: 'Policies',
  });

  const waitIfPreferred = async (prefer: string | undefined, policyIds: string[], target: WaitTarget) => {
    const seconds = waitPreference(prefer);
    if (seconds === undefined) return { detail: '', headers: {} as Record<string, string> };
    const reports = await awaitEnforcement(
      services.cache,
      policyIds,
      target,
      seconds * 1_000,
      services.replicaConfirmations,
    );
    const pending = reports.filter((report) => !report.enforced).length;
    const detail =
      pending === 0 ? '; enforced' : `; ${pending} not enforced after ${seconds} s (committed all the same)`;
    return {
      reports,
      detail,
      headers: { 'preference-applied': `wait=${seconds}` } as Record<string, string>,
    };
  };

  const table = new RouteTable({
    authentication: options.authentication,
    validateResponses: options.validateResponses,
  })
    .add(
      audited.wrap(audits.create, {
        method: 'post',
        path: '/policy',
        operationId: 'createPolicy',
        summary: 'Create policy grants (all or none)',
        description:
          'The caller must own each item or be an org_admin of its organisation. Authority comes first: a ' +
          'caller who could not grant on an item as named gets 403, never a 404, 409 or 400 about the item ' +
          '(cos_admin learns them, and gets 403 for a well-named item). 409 when an active policy ' +
          'already gives the same subject the same access type on the item. With Idempotency-Key, a retry ' +
          'with the same body answers the first answer again and creates nothing.',
        tags: TAGS,
        access: 'authenticated',
        request: { body: CreateBodySchema, headers: CreateHeadersSchema },
        responses: {
          201: {
            description: 'Created; results carry the policyIds in request order',
            schema: schemas.created,
            links: {
              RevokeFirstPolicy: {
                operationId: 'deletePolicy',
                parameters: { id: '$response.body#/results/0/policyId' },
                description: 'Revoke the first policy created',
              },
            },
          },
          403: problemResponse(
            'The caller is neither the item owner nor an org_admin of its organisation; also whenever the ' +
              'caller could not grant on the item as named, whatever the catalog holds',
          ),
          404: problemResponse('No CatalogItem has the itemId (told to cos_admin only)'),
          409: problemResponse(
            'An active policy exists, the item is ambiguous, or the Idempotency-Key was reused',
          ),
          503: unavailable,
        },
        handler: guarded(async ({ principal, body, headers, request }) => {
          await chargeWork(request, body.request.length);
          const outcome = await creator.create({
            principal,
            items: body.request,
            idempotencyKey: headers['idempotency-key'],
            log: request.log,
          });
          const waited = await waitIfPreferred(headers.prefer, outcome.policyIds, 'enforced');
          const result = {
            status: 201,
            headers: waited.headers,
            body: successEnvelope(urn, {
              title: 'Created',
              detail: count(outcome.policyIds.length, 'created') + waited.detail,
              results: waited.reports ?? outcome.policyIds.map((policyId) => ({ policyId })),
            }),
          };
          return outcome.replayed ? markReplayed(result) : result;
        }),
      }),
    )
    .add(
      audited.wrap(audits.revoke, {
        method: 'delete',
        path: '/policy',
        operationId: 'deletePolicy',
        summary: 'Revoke a policy (soft delete: the record stays, its status becomes DELETED)',
        description:
          'Allowed for the issuer, the item owner, an org_admin of its organisation, and cos_admin. ' +
          'Deleting an already revoked policy answers 200 with "0 policies deleted" and changes nothing.',
        tags: TAGS,
        access: 'authenticated',
        request: { query: DeleteQuerySchema, headers: PreferHeadersSchema },
        responses: {
          200: { description: 'Revoked, or already revoked (detail says which)', schema: schemas.deleted },
          403: problemResponse('The caller may not revoke this policy'),
          404: problemResponse('No policy has this id'),
          409: problemResponse('The policy kept changing during the revocation; retry'),
          503: unavailable,
        },
        handler: guarded(async ({ principal, query, headers, request }) => {
          const outcome = await revoker.revoke(principal, query.id, request.log);
          const detail = outcome.revoked
            ? count(1, 'deleted')
            : `${count(0, 'deleted')}; ${query.id} was already deleted at ${outcome.revokedAt}`;
          const waited = await waitIfPreferred(headers.prefer, [query.id], 'revoked');
          const results = waited.reports ? { results: waited.reports } : {};
          return {
            status: 200,
            headers: waited.headers,
            body: successEnvelope(urn, { title: 'Deleted', detail: detail + waited.detail, ...results }),
          };
        }),
      }),
    )
    .add(
      listing({
        path: '/policy/consumer',
        operationId: 'listConsumerPolicies',
        summary: 'Policies usable by the caller',
        access: 'authenticated',
        list: (p, q) => listings.consumer(p, q),
      }),
    )
    .add(
      listing({
        path: '/policy/provider',
        operationId: 'listProviderPolicies',
        summary: 'Policies issued by the caller',
        access: 'authenticated',
        list: (p, q) => listings.provider(p, q),
      }),
    )
    .add(
      listing({
        path: '/policy/organisation',
        operationId: 'listOrganisationPolicies',
        summary: "Policies on the items of the caller's organisation",
        access: { role: ORG_ADMIN },
        list: (p, q) => listings.organisation(p, q),
      }),
    )
    .add(
      listing({
        path: '/policy/platform',
        operationId: 'listPlatformPolicies',
        summary: 'All policies',
        access: { role: COS_ADMIN },
        list: (_p, q) => listings.platform(q),
      }),
    )
    .add({
      method: 'post',
      path: '/verify',
      operationId: 'verifyPolicy',
      summary: "The user's effective policies on the item",
      description:
        'Callable by the user themself, the item owner, an org_admin of its organisation, cos_admin, or an ' +
        'application (Basic credentials). Only effective policies count (the verdict the controller ' +
        'enforces); GROUP policies count when a Membership says the user is a member of an allowed ' +
        'organisation. id, constraints and expiryAt are those of the policy that expires last; results ' +
        'lists them all.',
      tags: TAGS,
      access: 'authenticated',
      request: { body: VerifyBodySchema },
      responses: {
        200: { description: 'Effective policies (id, constraints, expiryAt)', schema: schemas.verified },
        403: problemResponse('No active policy (title "No active policy"), or the caller may not ask'),
        503: unavailable,
      },
      handler: guarded(async ({ principal, body }) => {
        const { latest, all } = verifier.verify(principal, body.user.id, body.item.itemId);
        const envelope = successEnvelope(urn, { title: 'Active policy found', results: all });
        return { status: 200, body: { ...envelope, ...latest } };
      }),
    });
  addMembershipRoutes(table, { urn, cache: services.cache, ...services.memberships }, guarded, {
    routes: audited,
    events: audits.events,
    snapshot: audits.snapshot,
  });
  const { delegations, agents } = services;
  addDelegationRoutes(table, { urn, delegations, agents }, guarded, {
    routes: audited,
    delegate: audits.delegate,
    undelegate: audits.undelegate,
    enrolAgent: audits.enrolAgent,
    deleteAgent: audits.deleteAgent,
  });
  addAccessRequestRoutes(table, { urn, accessRequests: services.accessRequests }, guarded, {
    routes: audited,
    ask: audits.ask,
    decide: audits.decide,
  });
  addExplainRoute(table, { urn, cache: services.cache, explainer: services.explainer, audited }, guarded);
  return addAuditRoutes(table, { urn, ...services.auditReads });
}

/**
 * Every handler needs the synced cache and speaks HTTP errors only: a Kubernetes failure that escaped a
 * handler becomes a 503 naming kubernetes (or a 400 for an object the apiserver rejected), never a 500.
 */
function guard(cache: AclCache) {
  return <I, R>(handler: (input: I) => R | Promise<R>) =>
    async (input: I): Promise<R> => {
      const unsynced = cache.unsynced();
      if (unsynced.length > 0) {
        throw new HttpError(
          'DependencyUnavailable',
          `${KUBERNETES_DEPENDENCY} is unavailable: the cache of ${unsynced.join(', ')} has not synced yet`,
        );
      }
      try {
        return await handler(input);
      } catch (error) {
        throw kubernetesFailure(error);
      }
    };
}
