import { Writable } from 'node:stream';
import { createJwtVerifier } from '../../../../src/auth/jwt-verifier.js';
import type { TokenReviewApi } from '../../../../src/auth/token-review-verifier.js';
import type { BasicVerifier } from '../../../../src/auth/verifiers.js';
import { DECISION_CLIENT_ROLE } from '../../../../src/config/decision-clients.js';
import { PLATFORM_SEARCH_CLIENT_ROLE, SEARCH_CLIENT_ROLE } from '../../../../src/decision/check-callers.js';
import type { CheckCallers, SearchCallers } from '../../../../src/decision/check-callers.js';
import { startDecisionService } from '../../../../src/decision/decision-service.js';
import type {
  DecisionServiceConfig,
  RunningDecisionService,
} from '../../../../src/decision/decision-service.js';
import { createLogger } from '../../../../src/observability/logger.js';
import { createMetricsRegistry } from '../../../../src/observability/metrics.js';
import { AUDIENCE, ISSUER, jwksOf, signToken, testKey } from '../../../unit/auth/support/tokens.js';
import type { TestKey } from '../../../unit/auth/support/tokens.js';
import { POLL_TIMEOUT_MS, until } from '../../../../dev/wait/until.js';

export { AUDIENCE, ISSUER };

export interface DecisionServiceUnderTest extends RunningDecisionService {
  key: TestKey;
  metrics: ReturnType<typeof createMetricsRegistry>;
  /** `Authorization` header value of a valid caller: a JWT with the role `decision_client`. */
  authorization: string;
  /** Everything the service logged. */
  logs(): string;
  check(body: unknown, headers?: Record<string, string>): Promise<CheckResponse>;
  /** POSTs JSON to `path` as a valid caller (or with `headers` in place). */
  post<T = Record<string, unknown>>(
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: T }>;
  /**
   * Runs `change` (a write to SpiceDB), then waits until the revision barrier's Watch has delivered a change (not
   * a checkpoint) after it: its change, when the SpiceDB is the test's own and nothing else writes to it.
   */
  afterWatchDelivers<T>(change: () => Promise<T>): Promise<T>;
}

export interface CheckResponse {
  status: number;
  body: {
    type: string;
    title: string;
    detail?: string;
    result: { allowed: boolean; checked_at?: string; [field: string]: unknown };
  };
}

/** Who searches in these tests: the roles as the docs name them. */
export const TEST_SEARCH_CALLERS: SearchCallers = {
  roles: [SEARCH_CLIENT_ROLE],
  platformRoles: [PLATFORM_SEARCH_CLIENT_ROLE],
  platformServiceAccounts: [],
};

export interface ServiceOptions {
  spicedb: { endpoint: string; token: string };
  checkTimeoutMs?: number;
  basic?: BasicVerifier;
  tokenReview?: NonNullable<DecisionServiceConfig['tokenReview']> & { api: TokenReviewApi };
  /** Default: the service's (the role `decision_client`). */
  checkCallers?: CheckCallers;
  /** Default: searches within their organisations for `search_client`, everywhere for `platform_search_client`. */
  searchCallers?: SearchCallers;
  limits?: DecisionServiceConfig['limits'];
  checkBatch?: DecisionServiceConfig['checkBatch'];
  revisionBarrier?: DecisionServiceConfig['revisionBarrier'];
  trustProxy?: DecisionServiceConfig['trustProxy'];
  publicUrl?: string;
}

/** The TokenReview settings (configuration) apart from the API they are sent to (a live part). */
function splitTokenReview(options: ServiceOptions['tokenReview']): {
  tokenReview?: DecisionServiceConfig['tokenReview'];
  tokenReviewApi?: TokenReviewApi;
} {
  if (!options) return {};
  const { api, ...tokenReview } = options;
  return { tokenReview, tokenReviewApi: api };
}

/** The decision service as it runs in production, on loopback, with a JWT key of its own. */
export async function startServiceUnderTest(options: ServiceOptions): Promise<DecisionServiceUnderTest> {
  const key = await testKey('ES256', 'decision-it');
  const bearer = await createJwtVerifier({
    keys: { kind: 'jwks', jwks: jwksOf(key) },
    issuer: ISSUER,
    audience: AUDIENCE,
  });
  const metrics = createMetricsRegistry();
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const { tokenReview, tokenReviewApi } = splitTokenReview(options.tokenReview);
  const service = await startDecisionService(
    {
      port: 0,
      host: '127.0.0.1',
      spicedb: { ...options.spicedb, transport: 'plaintext' },
      ...(options.checkTimeoutMs === undefined ? {} : { checkTimeoutMs: options.checkTimeoutMs }),
      ...(tokenReview ? { tokenReview } : {}),
      ...(options.checkCallers ? { checkCallers: options.checkCallers } : {}),
      searchCallers: options.searchCallers ?? TEST_SEARCH_CALLERS,
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.checkBatch ? { checkBatch: options.checkBatch } : {}),
      ...(options.revisionBarrier ? { revisionBarrier: options.revisionBarrier } : {}),
      ...(options.trustProxy ? { trustProxy: options.trustProxy } : {}),
      ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    },
    {
      authenticators: { bearer, ...(options.basic ? { basic: options.basic } : {}) },
      ...(tokenReviewApi ? { tokenReviewApi } : {}),
      logger: createLogger({ level: 'info', destination }),
      metricsRegistry: metrics,
    },
  );
  // An enforcement point that checks and searches every organisation.
  const authorization = `Bearer ${await signToken(
    key,
    { roles: [DECISION_CLIENT_ROLE, PLATFORM_SEARCH_CLIENT_ROLE] },
    { expiresIn: 3_600 },
  )}`;
  const watchLog = () => lines.filter((line) => line.includes('SpiceDB Watch')).join('');
  // Changes only: on PostgreSQL, SpiceDB's Watch also sends checkpoints, one of which can arrive after a write
  // returned and still bring the Watch only to a revision before it.
  const watchChanges = async () =>
    Number(
      (await metrics.metrics()).match(
        /^policygrant_decision_revision_watch_messages_total\{kind="change"\} (\d+)/m,
      )?.[1],
    );
  async function post<T>(path: string, body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as T };
  }
  return {
    ...service,
    key,
    metrics,
    authorization,
    logs: () => lines.join(''),
    post,
    check: (body, headers = {}) => post<CheckResponse['body']>('/v1/check', body, headers),
    async afterWatchDelivers(change) {
      const before = await watchChanges();
      const result = await change();
      await until(async () => (await watchChanges()) > before, 'the Watch to deliver the change').catch(
        (error: unknown) => {
          throw new Error(`${String(error)}; what the service logged about it:\n${watchLog()}`, {
            cause: error,
          });
        },
      );
      return result;
    },
  };
}

/**
 * Waits for /healthz/ready, as Kubernetes would before sending traffic: right after the shared SpiceDB got its
 * schema, checks at minimize_latency fail for a few seconds.
 */
export async function untilReady(
  service: RunningDecisionService,
  timeoutMs = POLL_TIMEOUT_MS,
): Promise<void> {
  const ready = async () => (await fetch(`${service.url}/healthz/ready`)).status === 200;
  await until(ready, 'the decision service to be ready', timeoutMs);
}

/** A check about a user nobody granted anything: 200 with allowed false for any caller that may check. */
export function unknownUserCheck(resourceId: string): Record<string, string> {
  return {
    subject_type: 'user',
    subject_id: 'someone',
    resource_type: 'resource',
    resource_id: resourceId,
    relation: 'api',
  };
}
