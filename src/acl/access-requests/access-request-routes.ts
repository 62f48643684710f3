import { successEnvelope } from '../../http/envelope.js';
import type { RouteTable } from '../../http/openapi/route-table.js';
import { problemResponse } from '../../http/openapi/route-responses.js';
import type { UrnScheme } from '../../http/urn.js';
import type { AuditedRoutes, MutationAudit } from '../audit/audited-routes.js';
import { listingRoutes } from '../listing-route.js';
import type { WithSyncedCache } from '../memberships/membership-routes.js';
import {
  AccessRequestListingQuerySchema,
  AccessRequestParamsSchema,
  CreateAccessRequestBodySchema,
  DecideAccessRequestBodySchema,
  ETagHeadersSchema,
  IfMatchHeadersSchema,
  accessRequestResponseSchemas,
} from './access-request-schemas.js';
import type { AccessRequests, ReadRequest } from './access-requests.js';

const TAGS = ['access-requests'];
/** Where a 201 names the request it created: its id, for the routes of `/access-requests/{id}`. */
const CREATED_REQUEST = '$response.body#/results/0/requestId';

/** The audit of the two mutating access-request routes (docs/audit.md). */
export interface AccessRequestAudit {
  routes: AuditedRoutes;
  ask: MutationAudit<{ body: { itemId: string } }>;
  decide: MutationAudit<{ params: { id: string }; body: { status: string } }>;
}

const unavailable = problemResponse('Kubernetes is unavailable; detail names it');
const unknown = problemResponse(
  'No access request has this id, or the caller is neither its consumer nor a decider',
);

/**
 * POST /access-requests, the consumer and provider listings, GET and PATCH /access-requests/{id}
 * (docs/acl-access-requests.md, "Access requests").
 */
export function addAccessRequestRoutes(
  table: RouteTable,
  services: { urn: UrnScheme; accessRequests: AccessRequests },
  withSyncedCache: WithSyncedCache,
  audit: AccessRequestAudit,
): RouteTable {
  const { urn, accessRequests } = services;
  const schemas = accessRequestResponseSchemas(urn);
  const one = (status: number, title: string, read: ReadRequest) => ({
    status,
    headers: { etag: read.etag },
    body: successEnvelope(urn, { title, results: [read.row] }),
  });
  const listing = listingRoutes({
    urn,
    withSyncedCache,
    tags: TAGS,
    query: AccessRequestListingQuerySchema,
    page: { description: 'A page of access-request rows, oldest first', schema: schemas.listing },
    title: 'Access requests',
  });
  return table
    .add(
      audit.routes.wrap(audit.ask, {
        method: 'post',
        path: '/access-requests',
        operationId: 'createAccessRequest',
        summary: 'Ask for access to an item',
        description:
          'The caller (a user) asks the item’s owner or an org_admin of its organisation for a grant of ' +
          'the access types until expiryTime. 409 when the caller already has a PENDING request or an ' +
          'effective policy on the item for one of the access types.',
        tags: TAGS,
        access: 'authenticated',
        request: { body: CreateAccessRequestBodySchema },
        responses: {
          201: {
            description: 'Created, PENDING; results: [{requestId}]',
            schema: schemas.created,
            headers: ETagHeadersSchema,
            links: {
              GetAccessRequest: {
                operationId: 'getAccessRequest',
                parameters: { id: CREATED_REQUEST },
                description: 'Read the request created',
              },
              DecideAccessRequest: {
                operationId: 'decideAccessRequest',
                parameters: { id: CREATED_REQUEST, 'header.if-match': '$response.header.ETag' },
                description: 'Decide on (or withdraw) the request created, at the version it was created in',
              },
            },
          },
          403: problemResponse('The caller has no user id'),
          404: problemResponse('No CatalogItem has the itemId'),
          409: problemResponse(
            'A pending request or an effective policy exists, the item is ambiguous, or the caller reached ' +
              'the quota ACL_MAX_ACCESS_REQUESTS_PER_USER (detail names it)',
          ),
          503: unavailable,
        },
        handler: withSyncedCache(async ({ principal, body }) => {
          const read = await accessRequests.create(principal, body);
          return {
            status: 201,
            headers: { etag: read.etag },
            body: successEnvelope(urn, { title: 'Created', results: [{ requestId: read.row.requestId }] }),
          };
        }),
      }),
    )
    .add(
      listing({
        path: '/access-requests/consumer',
        operationId: 'listConsumerAccessRequests',
        summary: 'The caller’s own requests',
        access: 'authenticated',
        list: (p, q) => accessRequests.consumerListing(p, q),
      }),
    )
    .add(
      listing({
        path: '/access-requests/provider',
        operationId: 'listProviderAccessRequests',
        summary: 'Requests on the items the caller owns (an org_admin: on the items of their organisation)',
        access: 'authenticated',
        list: (p, q) => accessRequests.providerListing(p, q),
      }),
    )
    .add({
      method: 'get',
      path: '/access-requests/{id}',
      operationId: 'getAccessRequest',
      summary: 'One access request, with its ETag',
      description:
        'Visible to its consumer and its deciders (the item owner, an org_admin of its organisation).',
      tags: TAGS,
      access: 'authenticated',
      request: { params: AccessRequestParamsSchema },
      responses: {
        200: { description: 'results: [the request row]', schema: schemas.one, headers: ETagHeadersSchema },
        404: unknown,
        503: unavailable,
      },
      handler: withSyncedCache(({ principal, params }) =>
        one(200, 'Access request', accessRequests.get(principal, params.id)),
      ),
    })
    .add(
      audit.routes.wrap(audit.decide, {
        method: 'patch',
        path: '/access-requests/{id}',
        operationId: 'decideAccessRequest',
        summary: 'Approve, reject or withdraw a pending access request',
        description:
          'APPROVED or REJECTED by the item owner or an org_admin of its organisation, WITHDRAWN by the ' +
          'consumer; only from PENDING. If-Match must carry the ETag of the caller’s last read. Approval ' +
          'creates the grant through the path of POST /policy (its rules and 409s), labelled with the ' +
          'request; a conflict answers 409, creates nothing and leaves the request PENDING.',
        tags: TAGS,
        access: 'authenticated',
        request: {
          params: AccessRequestParamsSchema,
          headers: IfMatchHeadersSchema,
          body: DecideAccessRequestBodySchema,
        },
        responses: {
          200: {
            description: 'Decided; results: [the request row, with policyIds when approved]',
            schema: schemas.one,
            headers: ETagHeadersSchema,
          },
          403: problemResponse('The caller may not take this decision on this request'),
          404: problemResponse('No access request has this id'),
          409: problemResponse('The request is no longer PENDING, or the approval conflicts with a policy'),
          412: problemResponse('If-Match names a version the request no longer has'),
          428: problemResponse('If-Match is missing'),
          503: unavailable,
        },
        handler: withSyncedCache(async ({ principal, params, headers, body, request }) =>
          one(
            200,
            'Decided',
            await accessRequests.decide(principal, params.id, {
              ifMatch: headers['if-match'],
              body,
              log: request.log,
            }),
          ),
        ),
      }),
    );
}
