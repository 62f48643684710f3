import { z } from 'zod';
import { successEnvelope, successEnvelopeSchema } from '../http/envelope.js';
import { RouteTable } from '../http/openapi/route-table.js';
import { queryInteger } from '../http/query-integer.js';
import type { UrnScheme } from '../http/urn.js';
import { MAX_CONSISTENCY_TOKEN_LENGTH, ZEDTOKEN } from './check-request.js';
import type { RevisionBarrier } from './revision-barrier.js';

/** Asked by the ACL API for each Ready replica before `Prefer: wait` reports a change enforced. */
export const WATCH_PASSED_PATH = '/watch/passed';
/**
 * The longest one request waits for the Watch: a caller waiting longer asks again, so an unauthenticated request
 * holds a connection for a second at most.
 */
export const MAX_CONFIRMATION_WAIT_MS = 1_000;

const confirmationQuerySchema = z.object({
  zed_token: z
    .string()
    .max(MAX_CONSISTENCY_TOKEN_LENGTH)
    .regex(ZEDTOKEN, 'must be a ZedToken')
    .describe('The ZedToken of a write (a grant’s `status.zedToken`).'),
  wait_ms: queryInteger('wait_ms', {
    minimum: 0,
    maximum: MAX_CONFIRMATION_WAIT_MS,
    default: 0,
    description:
      'How long to wait for the Watch to deliver the token, in milliseconds; default 0 (answer at once).',
  }),
});

export interface RevisionRouteOptions {
  urn: UrnScheme;
  barrier: Pick<RevisionBarrier, 'confirm'>;
}

/**
 * GET /watch/passed: whether this replica's revision barrier has passed a ZedToken (its Watch delivered it and is
 * current), so that every check it evaluates from now on, without a token, sees that write. Public like the other
 * operational routes: it tells only whether a token was seen.
 */
export function revisionRoutes({ urn, barrier }: RevisionRouteOptions): RouteTable {
  const answer = successEnvelopeSchema(urn).extend({
    passed: z.boolean().describe('The Watch delivered the ZedToken and is current.'),
    watchCurrent: z.boolean().describe('The Watch is current (false: this replica has passed nothing).'),
  });
  return new RouteTable().add({
    method: 'get',
    path: WATCH_PASSED_PATH,
    operationId: 'getWatchPassed',
    summary: 'Has this replica’s revision barrier passed a ZedToken?',
    description:
      'Answers once the Watch has delivered the token (`passed: true`), or after `wait_ms` (`passed: false`). ' +
      'Only a token the Watch delivered counts: a token written before this replica started, or forgotten among ' +
      'more than 10,000 newer ones, is never passed.',
    access: 'public',
    request: { query: confirmationQuerySchema },
    responses: { 200: { description: 'Whether the replica passed the token', schema: answer } },
    handler: async ({ query, request }) => {
      // The caller gone (or its own deadline passed): stop waiting for it.
      const closed = new AbortController();
      request.res?.once('close', () => closed.abort());
      const confirmation = await barrier.confirm(query.zed_token, query.wait_ms, closed.signal);
      const title = confirmation.passed ? 'Passed' : 'Not passed';
      return { status: 200, body: { ...successEnvelope(urn, { title }), ...confirmation } };
    },
  });
}
