import { HttpError } from '../http/errors.js';
import type { CheckPermissionInput, Consistency, SpiceDBClient } from '../spicedb/client.js';
import { SpiceDBError } from '../spicedb/errors.js';
import { CheckRequestError } from '../spicedb/registry.js';
import type { CanonicalCheck, Registry } from '../spicedb/registry.js';
import type { CheckRequestBody } from './check-request.js';
import type { ConsistencySource } from './consistency-choice.js';
import type { DecisionMetrics } from './decision-metrics.js';
import { grpcStatusName } from './grpc-status.js';
import type { RevisionBarrier } from './revision-barrier.js';

/** What the decision service needs of SpiceDB; SpiceDBClient is one. */
export type PermissionChecker = Pick<SpiceDBClient, 'checkPermission' | 'health'>;

export interface CheckResult {
  allowed: boolean;
  subject: CanonicalCheck['subject'];
  object: CanonicalCheck['object'];
  relation: string;
  checked_at?: string;
}

/** Validated body → result; throws HttpError (400, 503) for everything that is not an answer. */
export type CheckEvaluator = (body: CheckRequestBody) => Promise<CheckResult>;

export interface CheckEvaluatorOptions {
  registry: Registry;
  spicedb: PermissionChecker;
  /** Picks each check's consistency (docs/decision-service.md, "Freshness"). */
  barrier: Pick<RevisionBarrier, 'consistencyFor'>;
  metrics: DecisionMetrics;
}

// Never fullyConsistent: SpiceDB v1.56.2 can serve a result cached past a grant's expiry under it.
const MINIMIZE_LATENCY: Consistency = { minimizeLatency: true };

/**
 * Canonicalises the request with the registry, lets the barrier pick the consistency and asks SpiceDB, within
 * the client's check deadline. Only SpiceDB's HAS_PERMISSION allows; any failure of SpiceDB is a 503 naming it
 * (the route adds `allowed: false` to every error answer).
 */
export function createCheckEvaluator(options: CheckEvaluatorOptions): CheckEvaluator {
  const { registry, spicedb, barrier, metrics } = options;
  return async (body) => {
    const check = canonicalOrBadRequest(registry, body);
    const started = performance.now();
    const elapsedSeconds = () => (performance.now() - started) / 1000;
    const query = spicedbQuery(check);
    let answer: Awaited<ReturnType<PermissionChecker['checkPermission']>>;
    let source: ConsistencySource | undefined;
    try {
      const chosen = await barrier.consistencyFor(query, body.consistency_token);
      source = chosen.source;
      answer = await spicedb.checkPermission({ ...query, consistency: chosen.consistency });
    } catch (error) {
      if (source === 'caller_token' && isUnknownRevision(error)) {
        throw new HttpError('BadRequest', 'consistency_token: not a revision this SpiceDB knows', {
          cause: error,
        });
      }
      metrics.decided('error', elapsedSeconds());
      if (!(error instanceof SpiceDBError)) throw error;
      metrics.backendError(grpcStatusName(error.code));
      throw new HttpError('DependencyUnavailable', 'spicedb could not evaluate the check; denied', {
        cause: error,
      });
    }
    const allowed = answer.allowed === true;
    metrics.decided(allowed ? 'allowed' : 'denied', elapsedSeconds());
    return {
      allowed,
      subject: check.subject,
      object: check.object,
      relation: check.relation,
      ...(answer.checkedAt ? { checked_at: answer.checkedAt } : {}),
    };
  };
}

function canonicalOrBadRequest(registry: Registry, body: CheckRequestBody): CanonicalCheck {
  try {
    return registry.canonicalise(body);
  } catch (error) {
    if (error instanceof CheckRequestError) {
      throw new HttpError('BadRequest', `${error.field}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/** The SpiceDB CheckPermission of a canonical check, at minimize_latency. */
export function spicedbQuery({ spicedb }: CanonicalCheck): CheckPermissionInput {
  return {
    resource: { type: spicedb.resourceType, id: spicedb.resourceId },
    permission: spicedb.permission,
    subject: {
      type: spicedb.subjectType,
      id: spicedb.subjectId,
      ...(spicedb.subjectRelation === undefined ? {} : { relation: spicedb.subjectRelation }),
    },
    consistency: MINIMIZE_LATENCY,
  };
}

/**
 * SpiceDB answers INVALID_ARGUMENT "invalid revision requested" to a token it cannot read or that is ahead of
 * it (another SpiceDB's, or from before a memory datastore restarted): when the check ran at the caller's
 * token, the caller's input, so a 400. Any other INVALID_ARGUMENT stays a 503: the request was canonicalised
 * and the barrier's own tokens are SpiceDB's, so it would be our fault (or SpiceDB's restart).
 */
function isUnknownRevision(error: unknown): boolean {
  return (
    error instanceof SpiceDBError &&
    grpcStatusName(error.code) === 'INVALID_ARGUMENT' &&
    /revision/i.test(error.message)
  );
}
