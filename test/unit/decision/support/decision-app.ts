import { createJwtVerifier } from '../../../../src/auth/jwt-verifier.js';
import { DECISION_CLIENT_ROLE, DEFAULT_CHECK_CALLERS } from '../../../../src/decision/check-callers.js';
import { createDecisionApp } from '../../../../src/decision/decision-app.js';
import type { DecisionApp, DecisionAppOptions } from '../../../../src/decision/decision-app.js';
import type { PermissionChecker } from '../../../../src/decision/check-evaluator.js';
import { DecisionCache } from '../../../../src/decision/decision-cache.js';
import { createUrnScheme } from '../../../../src/http/urn.js';
import { createMetricsRegistry } from '../../../../src/observability/metrics.js';
import type {
  BulkCheckAnswer,
  BulkCheckItem,
  CheckPermissionInput,
  CheckPermissionResult,
  Consistency,
  LookupResourcesPage,
  LookupSubjectsResult,
} from '../../../../src/spicedb/client.js';
import { SpiceDBError } from '../../../../src/spicedb/errors.js';
import { loadRegistry } from '../../../../src/spicedb/registry.js';
import { AUDIENCE, ISSUER, jwksOf, signToken, testKey } from '../../auth/support/tokens.js';
import type { TestKey } from '../../auth/support/tokens.js';
import { capturedLogger, serve } from '../../http/support/serve.js';

export const urn = createUrnScheme('authz');

/**
 * Stands in for SpiceDB: records each query and answers with `answer` (which may throw). A CheckBulkPermissions
 * call is recorded by its size and answers item by item, a SpiceDBError thrown for an item as that item's error.
 */
export class FakeSpiceDB implements PermissionChecker {
  readonly queries: CheckPermissionInput[] = [];
  readonly bulkCalls: number[] = [];
  answer: (query: CheckPermissionInput) => Promise<CheckPermissionResult> = async () => ({
    allowed: false,
    checkedAt: 'token-of-the-snapshot',
  });
  schemaWritten = true;

  checkPermission(query: CheckPermissionInput): Promise<CheckPermissionResult> {
    this.queries.push(query);
    return this.answer(query);
  }

  checkBulkPermissions(
    items: readonly BulkCheckItem[],
    consistency: Consistency,
  ): Promise<BulkCheckAnswer[]> {
    this.bulkCalls.push(items.length);
    const itemError = (error: unknown) => {
      if (error instanceof SpiceDBError) return error;
      throw error;
    };
    return Promise.all(items.map((item) => this.checkPermission({ ...item, consistency }).catch(itemError)));
  }

  async health(): Promise<{ schemaWritten: boolean }> {
    return { schemaWritten: this.schemaWritten };
  }

  /** Searches find nothing here; test/integration/decision/authzen covers them against SpiceDB. */
  async lookupResources(): Promise<LookupResourcesPage> {
    return { resourceIds: [], resultCount: 0, cursor: undefined, lookedUpAt: undefined };
  }

  async lookupSubjects(): Promise<LookupSubjectsResult> {
    return { subjectIds: [], lookedUpAt: undefined };
  }
}

type Barrier = DecisionAppOptions['barrier'];

/**
 * Stands in for the revision barrier; by default its Watch is current and saw no recent change. Its decision
 * cache never trusts its Watch, so every check reaches the fake SpiceDB.
 */
export class FakeBarrier implements Barrier {
  readonly decisions = new DecisionCache({ trustworthy: () => false });

  choose: Barrier['consistencyFor'] = async (_query, callerToken) =>
    callerToken === undefined
      ? { consistency: { minimizeLatency: true }, source: 'minimize_latency' }
      : { consistency: { atLeastAsFresh: callerToken }, source: 'caller_token' };

  consistencyFor: Barrier['consistencyFor'] = (query, callerToken) => this.choose(query, callerToken);

  searchConsistency: Barrier['searchConsistency'] = async () => ({
    consistency: { minimizeLatency: true },
    source: 'minimize_latency',
  });

  readiness(): ReturnType<Barrier['readiness']> {
    return { name: 'spicedb-watch', check: async () => undefined };
  }

  /** Tokens the Watch delivered: GET /watch/passed confirms them. */
  readonly delivered = new Set<string>();

  confirm: Barrier['confirm'] = async (token) => ({ passed: this.delivered.has(token), watchCurrent: true });
}

export interface DecisionUnderTest extends DecisionApp {
  url: string;
  spicedb: FakeSpiceDB;
  barrier: FakeBarrier;
  metrics: ReturnType<typeof createMetricsRegistry>;
  logs: ReturnType<typeof capturedLogger>;
  /** The identity provider's key. */
  key: TestKey;
  /** `Authorization` header value of a valid caller: a JWT with the role `decision_client`. */
  authorization: string;
  post(body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: CheckAnswer }>;
}

export interface CheckAnswer {
  type: string;
  title: string;
  detail?: string;
  result: { allowed: boolean; [field: string]: unknown };
}

/** The decision app over a fake SpiceDB, served on loopback until the end of the test. */
export async function decisionUnderTest(
  options: Pick<DecisionAppOptions, 'checkBatch'> = {},
): Promise<DecisionUnderTest> {
  const key = await testKey('ES256', 'decision-unit');
  const bearer = await createJwtVerifier({
    keys: { kind: 'jwks', jwks: jwksOf(key) },
    issuer: ISSUER,
    audience: AUDIENCE,
  });
  const spicedb = new FakeSpiceDB();
  const barrier = new FakeBarrier();
  const metrics = createMetricsRegistry();
  const logs = capturedLogger();
  const decision = createDecisionApp({
    urn,
    logger: logs.logger,
    metricsRegistry: metrics,
    registry: loadRegistry(),
    spicedb,
    barrier,
    authenticators: { bearer },
    checkCallers: DEFAULT_CHECK_CALLERS,
    ...options,
  });
  const url = await serve(decision.app);
  const authorization = `Bearer ${await signToken(key, { roles: [DECISION_CLIENT_ROLE] })}`;
  return {
    ...decision,
    url,
    spicedb,
    barrier,
    metrics,
    logs,
    key,
    authorization,
    async post(body, headers = {}) {
      const response = await fetch(`${url}/v1/check`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as CheckAnswer };
    },
  };
}

/** A valid check body; tests override one field at a time. */
export function aliceChecksApi(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    subject_type: 'user',
    subject_id: 'alice',
    organisation_id: '',
    resource_type: 'resource',
    resource_id: 'urn:dx:item:1',
    relation: 'api',
    ...overrides,
  };
}
