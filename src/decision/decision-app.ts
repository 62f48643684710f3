import type { Express } from 'express';
import type { Registry as MetricsRegistry } from 'prom-client';
import { apiAuthentication } from '../http/auth-middleware.js';
import type { TrustedProxies } from '../http/client-address.js';
import type { Authenticators } from '../auth/verifiers.js';
import { createHttpApp } from '../http/app.js';
import { limitedAuthentication } from '../http/rate-limit/limited-authentication.js';
import { NO_REQUEST_LIMITS } from '../http/rate-limit/request-limits.js';
import type { RequestLimits } from '../http/rate-limit/request-limits.js';
import type { Drain } from '../http/drain.js';
import type { OpenApiDocument } from '../http/openapi/route-definition.js';
import type { RouteTable } from '../http/openapi/route-table.js';
import { documentedOperationalRoutes } from '../http/operational-routes.js';
import type { ReadinessCheck } from '../http/readiness.js';
import type { UrnScheme } from '../http/urn.js';
import type { Logger } from '../observability/logger.js';
import type { CheckPermissionInput } from '../spicedb/client.js';
import type { Registry } from '../spicedb/registry.js';
import { canonicalCheck } from './canonical-check.js';
import type { CheckRequest } from './canonical-check.js';
import { checkBatchMetrics } from './check-batch-metrics.js';
import { CheckBatcher, DEFAULT_CHECK_BATCH } from './check-batcher.js';
import type { CheckBatchSettings } from './check-batcher.js';
import { createCanonicalCheckEvaluator, createCheckEvaluator, spicedbQuery } from './check-evaluator.js';
import type { CheckSender, PermissionChecker } from './check-evaluator.js';
import type { CheckCallers, SearchCallers } from './check-callers.js';
import { CHECK_OPERATION, checkRoutes } from './check-route.js';
import { decisionMetrics } from './decision-metrics.js';
import { failClosed, failClosedHotRoute } from './fail-closed.js';
import type { RevisionBarrier } from './revision-barrier.js';
import { revisionRoutes } from './revision-route.js';
import { authzenEvaluator } from './authzen/authzen-evaluations.js';
import { AUTHZEN_PATHS } from './authzen/authzen-metadata.js';
import { AUTHZEN_DENIED } from './authzen/authzen-response.js';
import { authzenRoutes, DECISION_OPERATIONS } from './authzen/authzen-routes.js';
import { authzenSearches } from './authzen/authzen-search.js';
import type { SearchBackend } from './authzen/authzen-search.js';
import type { PageTokens } from './authzen/page-token.js';

export interface DecisionAppOptions {
  urn: UrnScheme;
  logger: Logger;
  metricsRegistry: MetricsRegistry;
  registry: Registry;
  spicedb: PermissionChecker & SearchBackend;
  barrier: Pick<
    RevisionBarrier,
    'consistencyFor' | 'searchConsistency' | 'unchangedFor' | 'readiness' | 'decisions' | 'confirm'
  >;
  /** Concurrent checks sent together as CheckBulkPermissions calls; the defaults when absent. */
  checkBatch?: CheckBatchSettings;
  authenticators: Authenticators;
  /** The enforcement points: the only callers that may check. */
  checkCallers: CheckCallers;
  /** The callers of the searches (none by default), and which callers are platform-wide. */
  searchCallers: SearchCallers;
  /** Signs and reads the searches' page tokens. */
  pageTokens: PageTokens;
  /** Per-subject (class `check`) and failed-authentication limits; none when absent. */
  limits?: RequestLimits;
  trustProxy?: TrustedProxies;
  /** The server's drain: readiness fails once it began. */
  drain?: Drain;
  /** The public base URL of the AuthZEN metadata's endpoints; absent: the URL a request came to. */
  publicUrl?: string;
}

export interface DecisionApp {
  app: Express;
  document: OpenApiDocument;
}

const DOCUMENT_INFO = {
  title: 'policy-grant-operator authorization decision service',
  version: '1',
  description:
    'Relationship checks on the data hot path. Paths are relative to the service root; a gateway maps its ' +
    'public prefix onto it by strip-prefix.',
};

/** The rate-limit class of every decision route (the check's and the AuthZEN ones share a budget). */
export const CHECK_CLASS = 'check';

/** The decision service's OpenAPI document: served at GET /docs, committed in docs/openapi/. */
export function decisionDocument(
  routes: RouteTable,
  authzen: RouteTable,
  revisions: RouteTable,
  urn: UrnScheme,
): OpenApiDocument {
  return routes.document(
    { info: DOCUMENT_INFO, servers: [{ url: '/' }] },
    authzen,
    revisions,
    documentedOperationalRoutes(urn),
  );
}

/** The decision service's HTTP app: POST /v1/check, the AuthZEN routes and the operational endpoints. */
export function createDecisionApp(options: DecisionAppOptions): DecisionApp {
  const metrics = decisionMetrics(options.metricsRegistry);
  const checkOptions = {
    registry: options.registry,
    spicedb: options.spicedb,
    barrier: options.barrier,
    send: checkSender(options.spicedb, options.checkBatch ?? DEFAULT_CHECK_BATCH, options.metricsRegistry),
    metrics,
  };
  const authentication = limitedAuthentication(apiAuthentication(options.authenticators), {
    urn: options.urn,
    metricsRegistry: options.metricsRegistry,
    limits: options.limits ?? NO_REQUEST_LIMITS,
    classify: () => CHECK_CLASS,
  });
  const routes = checkRoutes({
    urn: options.urn,
    authentication,
    callers: options.checkCallers,
    searchCallers: options.searchCallers,
    evaluate: createCheckEvaluator(checkOptions),
  });
  // The same evaluator (one decision cache, one batcher) behind both vocabularies.
  const canonical = createCanonicalCheckEvaluator(checkOptions);
  const authzen = authzenRoutes({
    authentication,
    callers: options.checkCallers,
    searchCallers: options.searchCallers,
    evaluator: authzenEvaluator(options.registry, canonical),
    searches: authzenSearches({
      registry: options.registry,
      spicedb: options.spicedb,
      barrier: options.barrier,
      evaluate: canonical,
      metrics,
      pageTokens: options.pageTokens,
    }),
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
  });
  const revisions = revisionRoutes({ urn: options.urn, barrier: options.barrier });
  const document = decisionDocument(routes, authzen, revisions, options.urn);
  const app = createHttpApp({
    urn: options.urn,
    logger: options.logger,
    metricsRegistry: options.metricsRegistry,
    readinessChecks: [spicedbReadiness(options.spicedb, options.registry), options.barrier.readiness()],
    // The hot path: decisions are counted by the metrics; an info line per check would cost more than it tells.
    hotPaths: ['/v1/check', AUTHZEN_PATHS.evaluation, AUTHZEN_PATHS.evaluations],
    openApiDocument: document,
    // Served past express's router (CPU per check is what bounds throughput); other methods on the path, 405.
    hotRoutes: [
      failClosedHotRoute(routes.hotRoute(CHECK_OPERATION)),
      ...DECISION_OPERATIONS.map((operation) =>
        failClosedHotRoute(authzen.hotRoute(operation), AUTHZEN_DENIED),
      ),
    ],
    routers: [
      { path: '/', router: failClosed(routes.router()) },
      { path: '/', router: failClosed(authzen.router(), AUTHZEN_DENIED) },
      { path: '/', router: revisions.router() },
    ],
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    ...(options.drain ? { drain: options.drain } : {}),
  });
  // A check answer is never revalidated: hashing every body for an ETag is wasted work on the hot path.
  app.set('etag', false);
  return { app, document };
}

/** Through the batcher, or (batching off) each check a CheckPermission of its own, sent at once. */
function checkSender(
  spicedb: PermissionChecker,
  settings: CheckBatchSettings,
  metricsRegistry: MetricsRegistry,
): CheckSender {
  if (!settings.enabled) return (check) => spicedb.checkPermission(check);
  const metrics = checkBatchMetrics(metricsRegistry, () => batcher.waiting);
  const batcher = new CheckBatcher({ spicedb, settings, sent: metrics.sent });
  return (check) => batcher.check(check);
}

/** A check of the public vocabulary that the readiness probe runs the way a real check runs. */
const PROBE_CHECK: CheckRequest = {
  subject: { type: 'user', id: 'readiness-probe' },
  resource: { type: 'resource', id: 'readiness-probe' },
  relation: 'viewer',
};

/** The probe as SpiceDB sees it: the readiness check and the barrier's head revision read use it. */
export function probeQuery(registry: Registry): CheckPermissionInput {
  return spicedbQuery(canonicalCheck(registry, PROBE_CHECK));
}

/**
 * Ready when SpiceDB answers, has a schema, and evaluates a check at minimize_latency. The last part matters
 * right after the schema was first written: until SpiceDB's minimize_latency snapshot includes the schema,
 * checks fail (FAILED_PRECONDITION) although ReadSchema already returns it.
 */
function spicedbReadiness(spicedb: PermissionChecker, registry: Registry): ReadinessCheck {
  const probe = probeQuery(registry);
  return {
    name: 'spicedb',
    check: async () => {
      const { schemaWritten } = await spicedb.health();
      if (!schemaWritten) throw new Error('SpiceDB has no schema');
      await spicedb.checkPermission(probe);
    },
  };
}
