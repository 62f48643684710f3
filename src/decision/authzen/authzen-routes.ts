import type { ApiAuthentication, ResponseDefinition } from '../../http/openapi/route-definition.js';
import { RouteTable } from '../../http/openapi/route-table.js';
import { tooManyRequestsResponse } from '../../http/openapi/route-responses.js';
import { chargeWork } from '../../http/rate-limit/subject-rate-limit.js';
import { checkCallerRule, evaluationScope, searchCallerRule, searchScope } from '../check-callers.js';
import type { CheckCallers, SearchCallers } from '../check-callers.js';
import type { AuthzenEvaluator } from './authzen-evaluations.js';
import { AUTHZEN_PATHS, authzenMetadata, authzenMetadataSchema } from './authzen-metadata.js';
import {
  actionSearchRequestSchema,
  evaluationRequestSchema,
  evaluationsRequestSchema,
  MAX_EVALUATIONS,
  MAX_PAGE_LIMIT,
  resourceSearchRequestSchema,
  subjectSearchRequestSchema,
} from './authzen-request.js';
import {
  actionSearchResponseSchema,
  authzenProblemSchema,
  decisionSchema,
  evaluationsResponseSchema,
  resourceSearchResponseSchema,
  subjectSearchResponseSchema,
} from './authzen-response.js';
import type { AuthzenSearches } from './authzen-search.js';
import type { Principal } from '../../auth/principal.js';

/** Largest AuthZEN body: a full batch of evaluations with long ids fits. */
export const AUTHZEN_BODY_LIMIT = '512kb';
/** Every AuthZEN route that answers a decision or a search: all but the metadata. */
export const DECISION_OPERATIONS = [
  'authzenEvaluation',
  'authzenEvaluations',
  'authzenSearchSubject',
  'authzenSearchResource',
  'authzenSearchAction',
] as const;
const [EVALUATION, EVALUATIONS, SEARCH_SUBJECT, SEARCH_RESOURCE, SEARCH_ACTION] = DECISION_OPERATIONS;

export interface AuthzenRouteOptions {
  authentication: ApiAuthentication;
  /** The check's callers: the only callers of the evaluation routes. */
  callers: CheckCallers;
  /** The callers of the searches, and which of them are platform-wide. */
  searchCallers: SearchCallers;
  evaluator: AuthzenEvaluator;
  searches: AuthzenSearches;
  /** The decision point's public base URL; absent: the URL the request arrived at. */
  publicUrl?: string;
}

const denied = (description: string): ResponseDefinition => ({ description, schema: authzenProblemSchema });

/** The error answers every AuthZEN decision route shares: each a problem with `decision: false`. */
const DENIALS: Record<number, ResponseDefinition> = {
  400: denied('Invalid request; the detail names the field (unknown types, actions and fields too)'),
  401: denied('Missing or invalid credentials'),
  403: denied('The caller is not an enforcement point; the detail says who may call'),
  413: denied('Request body too large'),
  415: denied('Request body is not application/json'),
  429: tooManyRequestsResponse(authzenProblemSchema),
  500: denied('Unexpected error; denied'),
  503: denied('SpiceDB (or the credential check) is unavailable; denied'),
};

const FAILS_CLOSED =
  'Fails closed: every answer other than 200 carries `decision: false`; a SpiceDB error, timeout or outage is ' +
  'a 503.';
const FAIL_CLOSED =
  `${FAILS_CLOSED} Only enforcement points may call it (the callers of POST /v1/check); one bound to ` +
  'organisations is denied every item of another organisation.';
const SEARCH_FAIL_CLOSED =
  `${FAILS_CLOSED} Only the search callers may call it (none by default); one bound to organisations lists ` +
  'only what lies in them.';

/** The OpenID AuthZEN Authorization API 1.0 routes, declared once for the router and the OpenAPI document. */
export function authzenRoutes(options: AuthzenRouteOptions): RouteTable {
  const { evaluator, searches, searchCallers } = options;
  const access = { callers: checkCallerRule(options.callers) };
  const common = { method: 'post' as const, tags: ['authzen'], access };
  const searching = { ...common, access: { callers: searchCallerRule(searchCallers) } };
  const searcher = (principal: Principal) => ({
    // The route admitted the caller: it has a scope.
    scope: searchScope(principal, searchCallers) ?? new Set<string>(),
    principal,
  });
  return new RouteTable({ authentication: options.authentication, bodyLimit: AUTHZEN_BODY_LIMIT })
    .add({
      ...common,
      path: AUTHZEN_PATHS.evaluation,
      operationId: EVALUATION,
      summary: 'May the subject perform the action on the resource? (AuthZEN access evaluation)',
      description: `The check of POST /v1/check in AuthZEN's words. ${FAIL_CLOSED}`,
      request: { body: evaluationRequestSchema },
      responses: { 200: { description: '`decision` is the answer', schema: decisionSchema }, ...DENIALS },
      handler: async ({ body, principal }) => ({
        status: 200,
        body: await evaluator.evaluation(body, evaluationScope(principal, searchCallers)),
      }),
    })
    .add({
      ...common,
      path: AUTHZEN_PATHS.evaluations,
      operationId: EVALUATIONS,
      summary: 'Several evaluations in one request (AuthZEN access evaluations)',
      description:
        `At most ${MAX_EVALUATIONS} evaluations, each overriding the top-level subject, resource, action and ` +
        'context; answers in request order. `options.evaluations_semantic`: `execute_all` (default), ' +
        '`deny_on_first_deny` or `permit_on_first_permit` (answers up to and including the first deny or ' +
        'permit). One SpiceDB CheckBulkPermissions per consistency class carries the batch; any failure is a ' +
        `503 for the whole batch. ${FAIL_CLOSED}`,
      request: { body: evaluationsRequestSchema },
      responses: { 200: { description: 'The decisions', schema: evaluationsResponseSchema }, ...DENIALS },
      handler: async ({ body, principal, request }) => {
        // A batch costs the rate limit one unit per evaluation, as that many single evaluations would.
        await chargeWork(request, Math.max(1, body.evaluations?.length ?? 0));
        return {
          status: 200,
          body: await evaluator.evaluations(body, evaluationScope(principal, searchCallers)),
        };
      },
    })
    .add({
      ...searching,
      path: AUTHZEN_PATHS.searchSubject,
      operationId: SEARCH_SUBJECT,
      summary: 'The users (or agents) who may perform the action on the resource',
      description:
        'Direct grants, organisation members of GROUP grants, and (subject.type `agent`) delegations. ' +
        searchDescription(),
      request: { body: subjectSearchRequestSchema },
      responses: {
        200: { description: 'One page of subjects', schema: subjectSearchResponseSchema },
        ...DENIALS,
      },
      handler: async ({ body, principal }) => ({
        status: 200,
        body: await searches.subjects(body, searcher(principal)),
      }),
    })
    .add({
      ...searching,
      path: AUTHZEN_PATHS.searchResource,
      operationId: SEARCH_RESOURCE,
      summary: 'The items the subject may use for the action',
      description: searchDescription(),
      request: { body: resourceSearchRequestSchema },
      responses: {
        200: { description: 'One page of resources', schema: resourceSearchResponseSchema },
        ...DENIALS,
      },
      handler: async ({ body, principal }) => ({
        status: 200,
        body: await searches.resources(body, searcher(principal)),
      }),
    })
    .add({
      ...searching,
      path: AUTHZEN_PATHS.searchAction,
      operationId: SEARCH_ACTION,
      summary: 'The actions the subject may perform on the resource',
      description:
        'Every action of the resource type asked as one batch of checks, answered in name order. Each page ' +
        `passes the revision barrier on its own. ${SEARCH_FAIL_CLOSED}`,
      request: { body: actionSearchRequestSchema },
      responses: {
        200: { description: 'One page of actions', schema: actionSearchResponseSchema },
        ...DENIALS,
      },
      handler: async ({ body, principal }) => ({
        status: 200,
        body: await searches.actions(body, searcher(principal)),
      }),
    })
    .add({
      method: 'get',
      path: AUTHZEN_PATHS.metadata,
      operationId: 'authzenMetadata',
      summary: "The decision point's AuthZEN metadata: its endpoint URLs",
      description:
        'Public. The URLs are under the configured public base URL, else the one the request came to.',
      tags: ['authzen'],
      access: 'public',
      responses: { 200: { description: 'The metadata', schema: authzenMetadataSchema } },
      handler: ({ request }) => ({
        status: 200,
        body: authzenMetadata(
          options.publicUrl ?? `${request.protocol}://${request.get('host') ?? 'localhost'}`,
        ),
      }),
    });
}

function searchDescription(): string {
  return (
    `Paged: \`page.limit\` (default and maximum ${MAX_PAGE_LIMIT}) and \`page.token\` (the previous ` +
    "page's `next_token`). Complete: `next_token` is non-empty exactly when more results follow (search/" +
    'resource reads the page after a full one): no page is cut. A page may hold fewer results than ' +
    '`page.limit` and still carry a token when its caller is bound to organisations, or when its results were ' +
    'confirmed by checks after a change. ' +
    'The first page passes the revision barrier (a change acknowledged before it is seen); later pages are ' +
    `read at exactly the first page's snapshot, which the token carries (signed, bound to the request and the ` +
    `caller). ${SEARCH_FAIL_CLOSED}`
  );
}
