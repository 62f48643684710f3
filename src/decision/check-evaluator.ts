import { HttpError } from '../http/errors.js';
import type {
  CheckPermissionInput,
  CheckPermissionResult,
  Consistency,
  SpiceDBClient,
} from '../spicedb/client.js';
import { SpiceDBError } from '../spicedb/errors.js';
import type { Registry } from '../spicedb/registry.js';
import { canonicalCheck, spicedbSubject, withinVocabulary } from './canonical-check.js';
import type { CanonicalCheck, CanonicalCheckEvaluator, CheckResult } from './canonical-check.js';
import type { ConsistentCheck } from './check-batcher.js';
import { CHECK_BODY_FIELDS, checkRequestOfBody } from './check-request.js';
import type { CheckRequestBody } from './check-request.js';
import type { ConsistencySource } from './consistency-choice.js';
import type { CheckIdentity, Decision } from './decision-cache.js';
import type { DecisionMetrics } from './decision-metrics.js';
import { grpcStatusName } from './grpc-status.js';
import type { RevisionBarrier } from './revision-barrier.js';
import { checkKeys } from './revision-keys.js';
import { spicedbUnavailable } from './spicedb-failure.js';
import { scopedEvaluator } from './organisation-scope.js';
import type { OrganisationScope } from './organisation-scope.js';

/** What the decision service needs of SpiceDB; SpiceDBClient is one. */
export type PermissionChecker = Pick<SpiceDBClient, 'checkPermission' | 'checkBulkPermissions' | 'health'>;

/** Sends a check at the barrier's consistency to SpiceDB: the check batcher, or CheckPermission itself. */
export type CheckSender = (check: ConsistentCheck) => Promise<CheckPermissionResult>;

/**
 * Validated body and the caller's scope → result; throws HttpError (400, 503) for everything that is not an
 * answer.
 */
export type CheckEvaluator = (body: CheckRequestBody, scope: OrganisationScope) => Promise<CheckResult>;

export interface CheckEvaluatorOptions {
  registry: Registry;
  spicedb: PermissionChecker;
  /** Picks each check's consistency (docs/revision-barrier.md, "Freshness") and keeps the decision cache. */
  barrier: Pick<RevisionBarrier, 'consistencyFor' | 'decisions'>;
  /** How checks at the barrier's consistency reach SpiceDB; a check at a caller's token is always sent alone. */
  send: CheckSender;
  metrics: DecisionMetrics;
}

// Never fullyConsistent: SpiceDB (measured on v1.56.2) can serve a result cached past a grant's expiry under it.
const MINIMIZE_LATENCY: Consistency = { minimizeLatency: true };

/** Canonicalises the request with the registry (a 400 naming the field) and evaluates it. */
export function createCheckEvaluator(options: CheckEvaluatorOptions): CheckEvaluator {
  const evaluate = scopedEvaluator(createCanonicalCheckEvaluator(options));
  return (body, scope) =>
    evaluate(canonicalOrBadRequest(options.registry, body), body.consistency_token, scope);
}

/**
 * Answers a canonical check from the decision cache, or lets the barrier pick the consistency and asks SpiceDB,
 * within the client's check deadline. Only SpiceDB's HAS_PERMISSION allows; any failure of SpiceDB is a 503
 * naming it (the routes add a denial to every error answer).
 */
export function createCanonicalCheckEvaluator(options: CheckEvaluatorOptions): CanonicalCheckEvaluator {
  const { barrier, metrics } = options;
  const ask = askSpiceDB(options);
  return async (check, callerToken) => {
    const started = performance.now();
    const elapsedSeconds = () => (performance.now() - started) / 1000;
    const query = spicedbQuery(check);
    let decision: Decision;
    try {
      decision = await barrier.decisions.decide(checkIdentity(query, callerToken), () =>
        ask(query, callerToken),
      );
    } catch (error) {
      // A token SpiceDB does not know is the caller's input, not a decision.
      const rejectedInput = error instanceof HttpError && error.kind === 'BadRequest';
      if (!rejectedInput) metrics.decided('error', elapsedSeconds());
      throw error;
    }
    metrics.decided(decision.allowed ? 'allowed' : 'denied', elapsedSeconds());
    return {
      allowed: decision.allowed,
      subject: check.subject,
      object: check.object,
      relation: check.relation,
      ...(decision.checkedAt ? { checked_at: decision.checkedAt } : {}),
    };
  };
}

/**
 * One SpiceDB check at the consistency the barrier picks (synchronously, before the first await, as the decision
 * cache requires); its failures as the HTTP errors every check sharing it answers.
 */
function askSpiceDB({ spicedb, barrier, send, metrics }: CheckEvaluatorOptions) {
  return async (query: CheckPermissionInput, callerToken: string | undefined): Promise<Decision> => {
    let source: ConsistencySource | undefined;
    try {
      const chosen = await barrier.consistencyFor(query, callerToken);
      source = chosen.source;
      const check = { ...query, consistency: chosen.consistency };
      // Alone: SpiceDB refuses a revision it does not know for the whole call, and that is this caller's 400.
      const answer = await (source === 'caller_token' ? spicedb.checkPermission(check) : send(check));
      return {
        allowed: answer.allowed === true,
        ...(answer.checkedAt ? { checkedAt: answer.checkedAt } : {}),
      };
    } catch (error) {
      if (source === 'caller_token' && isUnknownRevision(error)) {
        throw new HttpError('BadRequest', 'consistency_token: not a revision this SpiceDB knows', {
          cause: error,
        });
      }
      if (!(error instanceof SpiceDBError)) throw error;
      throw spicedbUnavailable(error, metrics, 'evaluate the check');
    }
  };
}

/** Equal for checks that must get the same answer: the same SpiceDB check and the same caller's token. */
function checkIdentity(
  { resource, permission, subject }: CheckPermissionInput,
  callerToken: string | undefined,
): CheckIdentity {
  const id = `${resource.type}:${resource.id}#${permission}@${subject.type}:${subject.id}#${subject.relation ?? ''}`;
  return {
    id: callerToken === undefined ? id : `${id} ${callerToken}`,
    keys: checkKeys({ resource, subject }),
    resource,
    rememberable: callerToken === undefined,
  };
}

function canonicalOrBadRequest(registry: Registry, body: CheckRequestBody): CanonicalCheck {
  return withinVocabulary(CHECK_BODY_FIELDS, () => canonicalCheck(registry, checkRequestOfBody(body)));
}

/** The SpiceDB CheckPermission of a canonical check, at minimize_latency. */
export function spicedbQuery(check: CanonicalCheck): CheckPermissionInput {
  const { spicedb } = check;
  return {
    resource: { type: spicedb.resourceType, id: spicedb.resourceId },
    permission: spicedb.permission,
    subject: spicedbSubject(check),
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
