import type { Registry as MetricsRegistry } from 'prom-client';
import { createAuthenticators, type AuthenticatorSettings } from '../auth/authenticators.js';
import type { Authenticators } from '../auth/verifiers.js';
import { createTokenReviewVerifier, tokenReviewApi } from '../auth/token-review-verifier.js';
import type { TrustedProxies } from '../http/client-address.js';
import type { TokenReviewApi } from '../auth/token-review-verifier.js';
import { Drain } from '../http/drain.js';
import { listen } from '../http/server.js';
import { createUrnScheme, DEFAULT_URN_NAMESPACE } from '../http/urn.js';
import { loadKubeConfig } from '../kube/kube-config.js';
import type { Logger } from '../observability/logger.js';
import { serviceObservability, type ObservabilityParts } from '../observability/service-observability.js';
import { SpiceDBClient } from '../spicedb/client.js';
import { loadRegistry, type Registry } from '../spicedb/registry.js';
import { spicedbClientOptions, type SpiceDBSettings } from '../spicedb/spicedb-settings.js';
import type { ConcurrencyBound } from '../auth/concurrency-gate.js';
import type { RequestLimits } from '../http/rate-limit/request-limits.js';
import { boundedTokenReviews, DEFAULT_TOKEN_REVIEW_BOUND } from './bounded-token-reviews.js';
import { decisionAuthenticators } from './caller-authentication.js';
import { DEFAULT_CHECK_CALLERS, DEFAULT_SEARCH_CALLERS } from './check-callers.js';
import type { CheckCallers, SearchCallers } from './check-callers.js';
import { PageTokens } from './authzen/page-token.js';
import type { CheckBatchSettings } from './check-batcher.js';
import { createDecisionApp, probeQuery } from './decision-app.js';
import type { DecisionCacheSettings } from './decision-cache.js';
import { DEFAULT_REVISION_BARRIER, RevisionBarrier } from './revision-barrier.js';
import type { RevisionBarrierSettings } from './revision-barrier.js';

export const DEFAULT_DECISION_PORT = 8081;
export const DEFAULT_CHECK_TIMEOUT_MS = 2_000;
/** The audience ServiceAccount tokens must carry by default: the decision service's own, not the API server's. */
export const DEFAULT_TOKEN_REVIEW_AUDIENCE = 'policy-grant-decision';
/** kubeadm's and most distributions' --service-account-issuer. */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** The decision service's configuration, as data (decisionConfigFromEnvironment reads it from the environment). */
export interface DecisionServiceConfig {
  /** 0 picks a free port. */
  port: number;
  /** Default 0.0.0.0. */
  host?: string;
  spicedb: SpiceDBSettings;
  /** Deadline of every SpiceDB check (and of the readiness probe, and of a TokenReview). */
  checkTimeoutMs?: number;
  /** How callers authenticate: JWT (JWKS) and Basic application credentials, as for the ACL API. */
  auth: AuthenticatorSettings;
  /** Who may check (the enforcement points); default: callers with the role `decision_client`. */
  checkCallers?: CheckCallers;
  /** Who may search (none by default), within the organisations it is bound to or platform-wide. */
  searchCallers?: SearchCallers;
  /** Keys of the searches' page tokens, the first signs; none: a random key of this process. */
  pageTokenKeys?: readonly Uint8Array[];
  /** Also accept Kubernetes ServiceAccount tokens: bearer tokens issued by one of `issuers`. */
  tokenReview?: {
    jwtIssuers: readonly string[];
    /** The API server's --service-account-issuer values; default `https://kubernetes.default.svc.cluster.local`. */
    issuers?: readonly string[];
    /** TokenReviews at once and waiting; past it, 503. */
    bound?: ConcurrencyBound;
    /** Audiences a ServiceAccount token must carry; default `policy-grant-decision`, not the API server's. */
    audiences?: readonly string[];
  };
  /** A kubeconfig file, for the TokenReviews; absent: the in-cluster ServiceAccount. */
  kubeconfigPath?: string;
  /** The `<ns>` of `urn:<ns>:authz:<Kind>`; default `dx`. */
  errorNamespace?: string;
  /** Default `info`. */
  logLevel?: string;
  /** The revision barrier's window (SpiceDB's quantization interval), margin and memory bound. */
  revisionBarrier?: RevisionBarrierSettings;
  /** The decision cache: on, its bound and how long allows and denies are remembered; the defaults when absent. */
  decisionCache?: DecisionCacheSettings;
  /** Concurrent checks sent together (CheckBulkPermissions): on, most checks per call, calls in flight. */
  checkBatch?: CheckBatchSettings;
  /** Per-subject (class `check`) and failed-authentication limits; none when absent. */
  limits?: RequestLimits;
  /** Express's `trust proxy`: which proxies may name the client address; none when absent. */
  trustProxy?: TrustedProxies;
  /** How long stop() keeps serving after readiness failed, before it stops accepting; default 0. */
  drainMs?: number;
  /** The public base URL in the AuthZEN metadata; absent: the URL a request came to. */
  publicUrl?: string;
}

export interface RunningDecisionService {
  /** Base URL, e.g. `http://127.0.0.1:8081`; the check is at `${url}/v1/check`. */
  readonly url: string;
  readonly port: number;
  /**
   * Fails readiness and keeps serving for the drain delay, then stops accepting, lets in-flight checks finish,
   * stops the Watch and closes the SpiceDB connection.
   */
  stop(): Promise<void>;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::']);

export interface StartDecisionServiceOptions extends ObservabilityParts {
  /** The callers' verifiers, instead of those `config.auth` describes (tests and benchmarks bring their keys). */
  authenticators?: Authenticators;
  /** Default: the TokenReview API of `config.kubeconfigPath`, or of the in-cluster ServiceAccount. */
  tokenReviewApi?: TokenReviewApi;
}

/**
 * Starts the decision service in this process (the entrypoint, the dev stack, tests and the benchmarks): builds
 * the callers' authentication, the SpiceDB client and the revision barrier on its Watch, then the HTTP app, and
 * listens. Resolves once it listens.
 */
export function startDecisionService(
  config: DecisionServiceConfig,
  options?: StartDecisionServiceOptions,
): Promise<RunningDecisionService>;
/** With the callers' verifiers the caller brings: the configuration needs no `auth`. */
export function startDecisionService(
  config: Omit<DecisionServiceConfig, 'auth'>,
  options: StartDecisionServiceOptions & { authenticators: Authenticators },
): Promise<RunningDecisionService>;
export async function startDecisionService(
  config: Omit<DecisionServiceConfig, 'auth'> & Partial<Pick<DecisionServiceConfig, 'auth'>>,
  options: StartDecisionServiceOptions = {},
): Promise<RunningDecisionService> {
  const checkTimeoutMs = config.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const { logger, metricsRegistry } = serviceObservability(options, {
    name: 'decision-service',
    logLevel: config.logLevel ?? 'info',
  });
  const authenticators = await setupCallerAuthentication(config, options, { logger, metricsRegistry });
  const registry = loadRegistry();
  const spicedb = new SpiceDBClient({
    ...spicedbClientOptions(config.spicedb),
    deadlines: { checkMs: checkTimeoutMs },
  });
  const barrier = setupRevisionBarrier(config, { spicedb, registry, logger, metricsRegistry });
  barrier.start();
  const release = async () => {
    await barrier.stop();
    spicedb.close();
  };
  const drain = new Drain(config.drainMs);
  try {
    const { app } = createDecisionApp({
      urn: createUrnScheme('authz', config.errorNamespace ?? DEFAULT_URN_NAMESPACE),
      logger,
      metricsRegistry,
      registry,
      spicedb,
      barrier,
      ...(config.checkBatch ? { checkBatch: config.checkBatch } : {}),
      authenticators,
      checkCallers: config.checkCallers ?? DEFAULT_CHECK_CALLERS,
      searchCallers: config.searchCallers ?? DEFAULT_SEARCH_CALLERS,
      pageTokens: new PageTokens(config.pageTokenKeys),
      ...(config.limits ? { limits: config.limits } : {}),
      ...(config.trustProxy === undefined ? {} : { trustProxy: config.trustProxy }),
      ...(config.publicUrl === undefined ? {} : { publicUrl: config.publicUrl }),
      drain,
    });
    const host = config.host ?? '0.0.0.0';
    const server = await listen(app, { port: config.port, host, drain });
    const url = WILDCARD_HOSTS.has(host) ? `http://127.0.0.1:${server.port}` : server.url;
    logger.info({ url, tokenReview: config.tokenReview !== undefined }, 'decision service listening');
    return {
      url,
      port: server.port,
      async stop() {
        try {
          await server.close();
        } finally {
          await release();
        }
      },
    };
  } catch (error) {
    await release();
    throw error;
  }
}

/** What answers from memory and which checks must read SpiceDB: the revision barrier on SpiceDB's Watch. */
function setupRevisionBarrier(
  config: Pick<DecisionServiceConfig, 'revisionBarrier' | 'decisionCache'>,
  parts: { spicedb: SpiceDBClient; registry: Registry; logger: Logger; metricsRegistry: MetricsRegistry },
): RevisionBarrier {
  return new RevisionBarrier({
    spicedb: parts.spicedb,
    headProbe: probeQuery(parts.registry),
    settings: config.revisionBarrier ?? DEFAULT_REVISION_BARRIER,
    ...(config.decisionCache ? { cache: config.decisionCache } : {}),
    logger: parts.logger,
    metricsRegistry: parts.metricsRegistry,
  });
}

/**
 * Who may call: the JWT and Basic verifiers (`config.auth`'s, or the caller's own), and with `tokenReview` the
 * ServiceAccount tokens, reviewed within the check's deadline.
 */
async function setupCallerAuthentication(
  config: Pick<DecisionServiceConfig, 'tokenReview' | 'kubeconfigPath' | 'checkTimeoutMs'> &
    Partial<Pick<DecisionServiceConfig, 'auth'>>,
  options: StartDecisionServiceOptions,
  parts: { logger: Logger; metricsRegistry: MetricsRegistry },
): Promise<Authenticators> {
  const authenticators = options.authenticators ?? (await createAuthenticators(requiredAuth(config), parts));
  const { tokenReview } = config;
  if (!tokenReview) return decisionAuthenticators(authenticators);
  const reviews = createTokenReviewVerifier({
    api: options.tokenReviewApi ?? tokenReviewApi(loadKubeConfig(config.kubeconfigPath)),
    timeoutMs: config.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS,
    audiences: tokenReview.audiences ?? [DEFAULT_TOKEN_REVIEW_AUDIENCE],
  });
  return decisionAuthenticators(authenticators, {
    verifier: boundedTokenReviews(reviews, tokenReview.bound ?? DEFAULT_TOKEN_REVIEW_BOUND),
    jwtIssuers: tokenReview.jwtIssuers,
    serviceAccountIssuers: tokenReview.issuers ?? [DEFAULT_SERVICE_ACCOUNT_ISSUER],
  });
}

/** startDecisionService's overloads hold it: without verifiers of the caller's own, the configuration has `auth`. */
function requiredAuth(config: Partial<Pick<DecisionServiceConfig, 'auth'>>): AuthenticatorSettings {
  if (!config.auth) throw new Error('the decision service needs auth settings or authenticators');
  return config.auth;
}
