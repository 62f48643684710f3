import { z } from 'zod';
import { problemSchema } from '../../http/envelope.js';
import type { ApiAuthentication, ResponseDefinition } from '../../http/openapi/route-definition.js';
import { RouteTable } from '../../http/openapi/route-table.js';
import { tooManyRequestsResponse } from '../../http/openapi/route-responses.js';
import { chargeWork } from '../../http/rate-limit/subject-rate-limit.js';
import { checkCallerRule, evaluationScope, searchCallerRule, searchScope } from '../check-callers.js';
import type { CheckCallers, SearchCallers } from '../check-callers.js';
import type { AuthzenEvaluator } from './authzen-evaluations.js';
import { HttpError } from '../../http/errors.js';
import { requestIdHeaders, requestIdResponseHeaders } from '../../http/request-context.js';
import {
  AUTHZEN_PATHS,
  authzenMetadata,
  authzenMetadataSchema,
  METADATA_CACHE_CONTROL,
  metadataPath,
} from './authzen-metadata.js';
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
  /** The decision point's public base URL, its AuthZEN identifier; absent: no metadata is served. */
  publicUrl?: string;
}

const denied = (description: string): ResponseDefinition => ({
  description,
  schema: authzenProblemSchema,
  headers: requestIdResponseHeaders,
});

/** The error answers every AuthZEN decision route shares: each a problem with `decision: false`. */
const DENIALS: Record<number, ResponseDefinition> = {
  400: denied(
    'Invalid request; the detail names the field (a type, action or id outside the vocabulary too) or the ' +
      '`x-request-id` header over its bound',
  ),
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
  const answer = (description: string, schema: z.ZodType): ResponseDefinition => ({
    description,
    schema,
    headers: requestIdResponseHeaders,
  });
  return new RouteTable({ authentication: options.authentication, bodyLimit: AUTHZEN_BODY_LIMIT })
    .add({
      ...common,
      path: AUTHZEN_PATHS.evaluation,
      operationId: EVALUATION,
      summary: 'May the subject perform the action on the resource? (AuthZEN access evaluation)',
      description: `The check of POST /v1/check in AuthZEN's words. ${FAIL_CLOSED}`,
      request: { body: evaluationRequestSchema, headers: requestIdHeaders },
      responses: { 200: answer('`decision` is the answer', decisionSchema), ...DENIALS },
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
        'context; answers in request order. An evaluation outside the vocabulary (a type, action or id) ' +
        'answers `decision: false` with `context.error` ({status: 400, message}) and the others are answered; ' +
        'an evaluation missing a part with no top-level default is a 400 for the batch. ' +
        '`options.evaluations_semantic`: `execute_all` (default), `deny_on_first_deny` or ' +
        '`permit_on_first_permit` (answers up to and including the first deny or permit). One SpiceDB ' +
        'CheckBulkPermissions per consistency class carries the batch; any SpiceDB failure is a 503 for the ' +
        'whole batch. A batch costs the rate limit one unit per evaluation. ' +
        FAIL_CLOSED,
      request: { body: evaluationsRequestSchema, headers: requestIdHeaders },
      responses: { 200: answer('The decisions', evaluationsResponseSchema), ...DENIALS },
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
      request: { body: subjectSearchRequestSchema, headers: requestIdHeaders },
      responses: { 200: answer('One page of subjects', subjectSearchResponseSchema), ...DENIALS },
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
      request: { body: resourceSearchRequestSchema, headers: requestIdHeaders },
      responses: { 200: answer('One page of resources', resourceSearchResponseSchema), ...DENIALS },
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
      request: { body: actionSearchRequestSchema, headers: requestIdHeaders },
      responses: { 200: answer('One page of actions', actionSearchResponseSchema), ...DENIALS },
      handler: async ({ body, principal }) => ({
        status: 200,
        body: await searches.actions(body, searcher(principal)),
      }),
    })
    .add(metadataRoute(options.publicUrl));
}

/**
 * The metadata, named from the configured public URL only: a URL taken from the request (its Host) would let
 * whoever sends the request name the endpoints (a decision point mix-up). Without one, there is no metadata.
 */
function metadataRoute(publicUrl: string | undefined) {
  return {
    method: 'get' as const,
    path: publicUrl === undefined ? AUTHZEN_PATHS.metadata : metadataPath(publicUrl),
    operationId: 'authzenMetadata',
    summary: "The decision point's AuthZEN metadata: its endpoint URLs",
    description:
      'Public. The endpoints are under the configured public URL (`DECISION_PUBLIC_URL`), the decision ' +
      "point's identifier; the document is at the well-known path AuthZEN constructs from it (a path-ful " +
      'identifier `https://gw.example/decision`: `/.well-known/authzen-configuration/decision`). Without a ' +
      'public URL: 404.',
    tags: ['authzen'],
    access: 'public' as const,
    responses: {
      200: {
        description: 'The metadata',
        schema: authzenMetadataSchema,
        headers: z.object({ 'cache-control': z.literal(METADATA_CACHE_CONTROL) }),
      },
      404: { description: 'No public URL is configured', schema: problemSchema },
    },
    handler: () => {
      if (publicUrl === undefined) {
        throw new HttpError(
          'NotFound',
          'no AuthZEN metadata: the public URL (DECISION_PUBLIC_URL) is not set',
        );
      }
      return {
        status: 200,
        body: authzenMetadata(publicUrl),
        headers: { 'cache-control': METADATA_CACHE_CONTROL },
      };
    },
  };
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
