import type { Request } from 'express';
import type { Principal } from '../../auth/principal.js';
import { hasRole } from '../../auth/principal.js';
import { successEnvelope } from '../../http/envelope.js';
import { HttpError } from '../../http/errors.js';
import { chargeWork } from '../../http/rate-limit/subject-rate-limit.js';
import type { RouteTable } from '../../http/openapi/route-table.js';
import { problemResponse } from '../../http/openapi/route-responses.js';
import type { UrnScheme } from '../../http/urn.js';
import type { AclCache } from '../acl-cache.js';
import { COS_ADMIN, ORG_ADMIN, isOrgAdminOf } from '../authorisation.js';
import type { Page } from '../policies/policy-rows.js';
import type { AuditedRoutes, MutationAudit } from '../audit/audited-routes.js';
import type { MemberEventApplier } from './member-events.js';
import { listMembers } from './member-listing.js';
import type { MemberSnapshots } from './member-snapshot.js';
import type { MemberEvent } from './cloud-events.js';
import { EVENT_PRODUCER, PLATFORM_EVENT_PRODUCER, requireSpeaksFor } from './producer-scope.js';
import {
  EventBodies,
  GroupParamsSchema,
  MemberListingQuerySchema,
  OrganisationParamsSchema,
  SnapshotBodySchema,
  membershipResponseSchemas,
} from './membership-schemas.js';

const TAGS = ['memberships'];
const PRODUCERS = { anyRole: [EVENT_PRODUCER, PLATFORM_EVENT_PRODUCER, COS_ADMIN] };
const PRODUCER_RULE =
  'Role event_producer for the organisations it is bound to (its organisation claim, or its Basic ' +
  "credential's organisations); platform_event_producer or cos_admin for any organisation. An event for " +
  'another organisation refuses the whole batch with 403.';
const VIEWERS = { anyRole: [ORG_ADMIN, COS_ADMIN] };

/** Wraps a handler: 503 while the cache has not synced, Kubernetes failures as 503/400 (acl-routes.ts). */
export type WithSyncedCache = <I, R>(handler: (input: I) => R | Promise<R>) => (input: I) => Promise<R>;

export interface MembershipServices {
  urn: UrnScheme;
  cache: AclCache;
  applier: MemberEventApplier;
  snapshots: MemberSnapshots;
}

interface MemberSet {
  organisationId: string;
  groupId?: string;
}

const unavailable = problemResponse(
  'Kubernetes is unavailable (detail names it); applied events stay applied',
);
const notBound = problemResponse(
  'Requires role event_producer, platform_event_producer or cos_admin; an event_producer speaks only for the ' +
    'organisations it is bound to (detail names the field of the first other one; nothing is applied)',
);
const keptChanging = problemResponse('A membership kept changing during the retries; send the request again');

/** How the mutating membership routes are audited (docs/audit.md). */
export interface MembershipAudit {
  routes: AuditedRoutes;
  events: MutationAudit<{ body: MemberEvent | MemberEvent[] }>;
  snapshot: MutationAudit<{ params: MemberSet }>;
}

/** POST /events, and PUT and GET on the member paths of an organisation and of a group. */
export function addMembershipRoutes(
  table: RouteTable,
  services: MembershipServices,
  withSyncedCache: WithSyncedCache,
  audit: MembershipAudit,
): RouteTable {
  const { urn, cache, applier, snapshots } = services;
  const schemas = membershipResponseSchemas(urn);

  const snapshotHandler = withSyncedCache(
    async ({
      principal,
      params,
      body,
      request,
    }: {
      principal: Principal;
      params: MemberSet;
      body: { userIds: string[] };
      request: Request;
    }) => {
      requireSpeaksFor(principal, [{ organisationId: params.organisationId, field: 'organisationId' }]);
      const counts = await snapshots.replace(params, body.userIds, (units) => chargeWork(request, units));
      return {
        status: 200,
        body: successEnvelope(urn, {
          title: 'Members replaced',
          detail: `${counts.added} added, ${counts.removed} removed`,
          results: [counts],
        }),
      };
    },
  );
  const listingHandler = withSyncedCache(
    ({ principal, params, query }: { principal: Principal; params: MemberSet; query: Page }) => {
      if (!hasRole(principal, COS_ADMIN) && !isOrgAdminOf(principal, params.organisationId)) {
        throw new HttpError(
          'Forbidden',
          `only an org_admin of organisation ${params.organisationId} or a cos_admin may list its members`,
        );
      }
      return {
        status: 200,
        body: successEnvelope(urn, { title: 'Members', ...listMembers(cache, params, query) }),
      };
    },
  );
  const snapshotResponses = {
    200: { description: 'Replaced; results: [{added, removed}]', schema: schemas.snapshot },
    403: notBound,
    409: keptChanging,
    503: unavailable,
  };
  const listingResponses = {
    200: { description: 'A page of current members, by userId', schema: schemas.members },
    503: unavailable,
  };

  return table
    .add(
      audit.routes.wrap(audit.events, {
        method: 'post',
        path: '/events',
        operationId: 'postMemberEvents',
        summary: 'Apply membership events (CloudEvents 1.0, structured or batch)',
        description:
          'Types org.member.added, org.member.removed (data {organisationId, userId}), group.member.added, ' +
          'group.member.removed (data {organisationId, groupId, userId}); time is required. A malformed event ' +
          'rejects the whole batch (400 naming the index and field) and nothing is applied. Idempotent: an ' +
          'event already applied (source, id) is a duplicate, an event older than the membership state is ' +
          'stale; a retried batch is safe. ' +
          PRODUCER_RULE,
        tags: TAGS,
        access: PRODUCERS,
        request: { bodies: EventBodies },
        responses: {
          200: { description: 'One result per event, in request order', schema: schemas.events },
          403: notBound,
          409: keptChanging,
          503: unavailable,
        },
        handler: withSyncedCache(async ({ principal, body, request }) => {
          requireSpeaksFor(principal, namedOrganisations(body));
          const events = Array.isArray(body) ? body : [body];
          await chargeWork(request, events.length);
          const results = await applier.apply(events);
          return {
            status: 200,
            body: successEnvelope(urn, { title: 'Events processed', detail: summary(results), results }),
          };
        }),
      }),
    )
    .add(
      audit.routes.wrap(audit.snapshot, {
        method: 'put',
        path: '/organisations/{organisationId}/members',
        operationId: 'replaceOrganisationMembers',
        summary: "Replace an organisation's members with an authoritative snapshot",
        description: 'Missing members are added, members not listed are removed. ' + PRODUCER_RULE,
        tags: TAGS,
        access: PRODUCERS,
        request: { params: OrganisationParamsSchema, body: SnapshotBodySchema },
        responses: snapshotResponses,
        handler: snapshotHandler,
      }),
    )
    .add(
      audit.routes.wrap(audit.snapshot, {
        method: 'put',
        path: '/organisations/{organisationId}/groups/{groupId}/members',
        operationId: 'replaceGroupMembers',
        summary: "Replace a group's members with an authoritative snapshot",
        description: 'Missing members are added, members not listed are removed. ' + PRODUCER_RULE,
        tags: TAGS,
        access: PRODUCERS,
        request: { params: GroupParamsSchema, body: SnapshotBodySchema },
        responses: snapshotResponses,
        handler: snapshotHandler,
      }),
    )
    .add({
      method: 'get',
      path: '/organisations/{organisationId}/members',
      operationId: 'listOrganisationMembers',
      summary: "An organisation's current members",
      description: 'For an org_admin of the organisation, or cos_admin.',
      tags: TAGS,
      access: VIEWERS,
      request: { params: OrganisationParamsSchema, query: MemberListingQuerySchema },
      responses: listingResponses,
      handler: listingHandler,
    })
    .add({
      method: 'get',
      path: '/organisations/{organisationId}/groups/{groupId}/members',
      operationId: 'listGroupMembers',
      summary: "A group's current members",
      description: 'For an org_admin of the organisation, or cos_admin.',
      tags: TAGS,
      access: VIEWERS,
      request: { params: GroupParamsSchema, query: MemberListingQuerySchema },
      responses: listingResponses,
      handler: listingHandler,
    });
}

/** The organisation of each event, with the field that names it (indexed in batch mode, as a 400 is). */
function namedOrganisations(body: MemberEvent | MemberEvent[]) {
  if (!Array.isArray(body))
    return [{ organisationId: body.data.organisationId, field: 'data.organisationId' }];
  return body.map((event, index) => ({
    organisationId: event.data.organisationId,
    field: `[${index}].data.organisationId`,
  }));
}

function summary(results: readonly { outcome: string }[]): string {
  const count = (outcome: string) => results.filter((result) => result.outcome === outcome).length;
  return `${count('applied')} applied, ${count('duplicate')} duplicate, ${count('stale')} stale`;
}
