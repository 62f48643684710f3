import type { ApiAuthentication } from '../http/openapi/route-definition.js';
import { RouteTable } from '../http/openapi/route-table.js';
import { tooManyRequestsResponse } from '../http/openapi/route-responses.js';
import { resultEnvelope } from '../http/envelope.js';
import type { UrnScheme } from '../http/urn.js';
import type { CheckEvaluator } from './check-evaluator.js';
import { checkCallerRule, evaluationScope } from './check-callers.js';
import type { CheckCallers, SearchCallers } from './check-callers.js';
import { checkRequestSchema, checkResponseSchema, deniedProblemSchema } from './check-request.js';

/** At the service root; a gateway maps its public prefix onto it by strip-prefix. */
export const CHECK_PATH = '/v1/check';
export const CHECK_OPERATION = 'check';
/** Largest check body: three ids of 1024 characters, each \u-escaped, fit. */
export const CHECK_BODY_LIMIT = '32kb';

const denied = (description: string) => ({ description, schema: deniedProblemSchema });

export interface CheckRouteOptions {
  urn: UrnScheme;
  authentication: ApiAuthentication;
  /** Who may check; every other authenticated caller gets 403, before the body is read. */
  callers: CheckCallers;
  /** Which callers are platform-wide (evaluationScope). */
  searchCallers: SearchCallers;
  evaluate: CheckEvaluator;
}

/** POST /v1/check, declared once for the router and the OpenAPI document. */
export function checkRoutes(options: CheckRouteOptions): RouteTable {
  const { urn, authentication, callers, searchCallers, evaluate } = options;
  return new RouteTable({ authentication, bodyLimit: CHECK_BODY_LIMIT }).add({
    method: 'post',
    path: CHECK_PATH,
    operationId: CHECK_OPERATION,
    summary: 'Does the subject hold the relation on the resource?',
    description:
      'Evaluates one relationship check in SpiceDB. Fails closed: every answer other than 200 carries ' +
      '`result.allowed: false`; a SpiceDB error, timeout or outage is a 503 naming spicedb. Only enforcement ' +
      'points may call it: callers with a configured role (`decision_client` by default), listed ' +
      'ServiceAccounts, or Basic applications with that role; any other caller gets 403. A caller bound to ' +
      'organisations (its organisation claim, its Basic `organisations`) is denied every item of another one.',
    tags: ['decision'],
    access: { callers: checkCallerRule(callers) },
    request: { body: checkRequestSchema },
    responses: {
      200: { description: '`result.allowed` is the decision', schema: checkResponseSchema(urn) },
      400: denied('Invalid request; the detail names the field'),
      401: denied('Missing or invalid credentials'),
      403: denied('The caller is not an enforcement point; the detail says who may check'),
      413: denied('Request body too large'),
      415: denied('Request body is not application/json'),
      429: tooManyRequestsResponse(deniedProblemSchema),
      500: denied('Unexpected error; denied'),
      503: denied('SpiceDB (or the credential check) is unavailable; denied'),
    },
    handler: async ({ body, principal }) => {
      const result = await evaluate(body, evaluationScope(principal, searchCallers));
      return {
        status: 200,
        body: resultEnvelope(urn, { title: result.allowed ? 'Allowed' : 'Denied', result }),
      };
    },
  });
}
