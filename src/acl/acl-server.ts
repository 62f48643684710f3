import type { Express } from 'express';
import { apiAuthentication } from '../auth/middleware.js';
import { withVerifiedTokenCache } from '../auth/verified-token-cache.js';
import { createHttpApp } from '../http/app.js';
import { limitedAuthentication } from '../http/rate-limit/limited-authentication.js';
import { NO_REQUEST_LIMITS } from '../http/rate-limit/request-limits.js';
import type { OpenApiDocument } from '../http/openapi/route-definition.js';
import type { RouteTable } from '../http/openapi/route-table.js';
import type { ReadinessCheck } from '../http/readiness.js';
import { Drain } from '../http/drain.js';
import { listen } from '../http/server.js';
import { createUrnScheme } from '../http/urn.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createMetricsRegistry } from '../observability/metrics.js';
import { loadRegistry } from '../spicedb/registry.js';
import { AclCache } from './acl-cache.js';
import { aclRouteClass } from './acl-route-classes.js';
import {
  DEFAULT_CLAIM_PENDING_TIMEOUT_MS,
  DEFAULT_READ_YOUR_WRITE_TIMEOUT_MS,
  type AclApiConfig,
} from './acl-config.js';
import { aclDocument } from './acl-document.js';
import { aclRoutes } from './acl-routes.js';
import { DEFAULT_CLAIM_WAIT_MS, PolicyCreator } from './policies/create-policies.js';
import { registerGrantMetrics } from './policies/grant-metrics.js';
import { GrantStore } from './policies/grant-store.js';
import { KubeClient } from '../kube/kube-client.js';
import { ACL_API_FIELD_MANAGER } from '../audit/field-managers.js';
import { KUBERNETES_DEPENDENCY } from './kube-errors.js';
import { AccessRequests } from './access-requests/access-requests.js';
import { AgentOwnership } from './delegations/agents.js';
import { DEFAULT_USER_QUOTAS } from './user-quotas.js';
import { Delegations } from './delegations/delegations.js';
import { MemberEventApplier } from './memberships/member-events.js';
import { MemberSnapshots } from './memberships/member-snapshot.js';
import { MembershipStore } from './memberships/membership-store.js';
import { PolicyListings } from './policies/list-policies.js';
import { PolicyRevoker } from './policies/revoke-policy.js';
import { AccessVerifier } from './policies/verify-access.js';
import { DEFAULT_CHECK_CALLERS } from '../decision/check-callers.js';
import { AuditReader } from '../audit/audit-reader.js';
import { Explainer } from './explain/explainer.js';
import { AuditStore, POSTGRES_DEPENDENCY } from '../audit/audit-store.js';
import { schedulePruning } from '../audit/retention.js';
import { startSchemaMigrator, type SchemaMigrator } from '../audit/schema-migrator.js';
import { NO_CHAIN_KEY_WARNING, type AuditConfig } from '../config/audit-config.js';
import { AuditedRoutes } from './audit/audited-routes.js';
import { staticReplicas, type DecisionReplicas } from './decision-replicas/decision-replicas.js';
import { endpointSliceReplicas } from './decision-replicas/endpoint-slice-replicas.js';
import { ReplicaConfirmations } from './decision-replicas/replica-confirmations.js';
import { MutationAuditor, NO_AUDIT } from './audit/mutation-auditor.js';

export const DEFAULT_STARTUP_SYNC_TIMEOUT_MS = 30_000;

export interface RunningAclApi {
  /** Base URL of the API, including the base path (e.g. `http://127.0.0.1:8080/v2`). */
  url: string;
  /** The server root, where /healthz/*, /metrics and /docs are. */
  rootUrl: string;
  port: number;
  app: Express;
  routes: RouteTable;
  /** The informer caches the API answers from (tests and the dev stack wait on them). */
  cache: AclCache;
  /** The audit store's routes: which operations are audited (tests walk them). */
  audited: AuditedRoutes;
  /** The decision replicas that confirm a change for `Prefer: wait`, when configured (tests read them). */
  decisionReplicas?: DecisionReplicas;
  document: OpenApiDocument;
  /**
   * Drains (readiness fails, serving goes on for the drain delay), stops serving (in-flight requests finish
   * within the grace period), then the informers and clients.
   */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Check every answer against its declared schema (tests). */
  validateResponses?: boolean;
  /** False: mutations are not recorded. Only for `npm run bench:audit`, which measures what auditing adds. */
  auditing?: boolean;
}

/** Starts the ACL API: informers, then the HTTP server. Resolves once it listens. */
export async function startAclApi(config: AclApiConfig, options: StartOptions = {}): Promise<RunningAclApi> {
  const logger: Logger =
    'child' in config.logger ? config.logger : createLogger({ level: config.logger.level, name: 'acl-api' });
  const now = () => new Date();
  const urn = createUrnScheme('acl', config.errorNamespace);
  // Names the ACL API in the objects' managedFields: the controller does not audit these changes again.
  const kube = new KubeClient(config.kubeConfig, {
    fieldManager: ACL_API_FIELD_MANAGER,
    ...(config.kubeTimeoutMs === undefined ? {} : { timeoutMs: config.kubeTimeoutMs }),
  });
  const store = new GrantStore(kube, config.namespace);
  const cache = new AclCache(kube, config.namespace, loadRegistry(), logger);
  const readYourWriteTimeoutMs = config.readYourWriteTimeoutMs ?? DEFAULT_READ_YOUR_WRITE_TIMEOUT_MS;
  const memberships = new MembershipStore(kube, cache, config.namespace);
  const metricsRegistry = config.metricsRegistry ?? createMetricsRegistry({ processMetrics: true });
  const audit = await startAudit(config.audit, logger);
  const audited = new AuditedRoutes(
    options.auditing === false
      ? NO_AUDIT
      : new MutationAuditor(audit.store, logger, metricsRegistry, () => audit.migrator.ready()),
  );
  const verifier = new AccessVerifier(cache, now, {
    roles: config.decisionClientRoles ?? DEFAULT_CHECK_CALLERS.roles,
    serviceAccounts: [],
  });
  const creator = new PolicyCreator(store, cache, {
    claimPendingTimeoutMs: config.claimPendingTimeoutMs ?? DEFAULT_CLAIM_PENDING_TIMEOUT_MS,
    claimWaitMs: DEFAULT_CLAIM_WAIT_MS,
    readYourWriteTimeoutMs,
    now,
  });

  const agents = new AgentOwnership({ kube, cache, namespace: config.namespace, now });
  const replicas =
    config.decisionReplicas && decisionReplicas(config.decisionReplicas, kube, config.namespace, logger);
  const replicaConfirmations = replicas && new ReplicaConfirmations({ replicas, logger, metricsRegistry });
  const quotas = config.quotas ?? DEFAULT_USER_QUOTAS;
  const routes = aclRoutes(
    {
      urn,
      cache,
      creator,
      revoker: new PolicyRevoker(store, cache, { readYourWriteTimeoutMs, now }),
      listings: new PolicyListings(cache, now),
      verifier,
      memberships: {
        applier: new MemberEventApplier(memberships, metricsRegistry),
        snapshots: new MemberSnapshots(memberships, cache, now),
      },
      delegations: new Delegations({
        kube,
        cache,
        verifier,
        agents,
        quotas,
        namespace: config.namespace,
        now,
        readYourWriteTimeoutMs,
      }),
      agents,
      accessRequests: new AccessRequests({
        kube,
        cache,
        creator,
        grants: store,
        verifier,
        quotas,
        namespace: config.namespace,
        now,
        readYourWriteTimeoutMs,
      }),
      explainer: new Explainer({ cache, kube, namespace: config.namespace, now }),
      audited,
      ...(replicaConfirmations ? { replicaConfirmations } : {}),
      auditReads: {
        reader: new AuditReader(audit.store.pool),
        ping: () => audit.store.ping(),
        ...(config.audit.chainKey ? { chainKey: config.audit.chainKey } : {}),
      },
    },
    {
      authentication: limitedAuthentication(
        apiAuthentication(withVerifiedTokenCache(config.authenticators)),
        {
          urn,
          metricsRegistry,
          limits: config.limits ?? NO_REQUEST_LIMITS,
          classify: aclRouteClass,
        },
      ),
      ...(options.validateResponses === undefined ? {} : { validateResponses: options.validateResponses }),
    },
  );
  const document = aclDocument(routes, config.basePath, urn);
  registerGrantMetrics(metricsRegistry, cache, now);
  const drain = new Drain(config.drainMs);
  const app = createHttpApp({
    urn,
    logger,
    metricsRegistry,
    readinessChecks: [...readinessChecks(store, cache), auditReadiness(audit.store)],
    drain,
    openApiDocument: document,
    ...(config.trustProxy === undefined ? {} : { trustProxy: config.trustProxy }),
    routers: [{ path: config.basePath, router: audited.withRefusalsRecorded(routes.router()) }],
  });

  cache.start();
  replicaConfirmations?.start();
  const synced = await cache.waitForSync(config.startupSyncTimeoutMs ?? DEFAULT_STARTUP_SYNC_TIMEOUT_MS);
  if (!synced) logger.warn({ unsynced: cache.unsynced() }, 'serving before the caches synced: not ready yet');
  const stopClients = async () => {
    await cache.stop();
    await replicaConfirmations?.stop();
    kube.close();
    await audit.stop();
  };
  const server = await listen(app, {
    port: config.port,
    host: config.host,
    drain,
    ...(config.closeGraceMs === undefined ? {} : { closeGraceMs: config.closeGraceMs }),
  }).catch(async (error: unknown) => {
    await stopClients();
    throw error;
  });
  logger.info(
    { url: server.url, basePath: config.basePath, namespace: config.namespace },
    'ACL API listening',
  );
  return {
    url: `${server.url}${config.basePath === '/' ? '' : config.basePath}`,
    rootUrl: server.url,
    port: server.port,
    app,
    routes,
    cache,
    audited,
    document,
    ...(replicas ? { decisionReplicas: replicas } : {}),
    async stop() {
      await server.close();
      await stopClients();
    },
  };
}

function decisionReplicas(
  source: NonNullable<AclApiConfig['decisionReplicas']>,
  kube: KubeClient,
  namespace: string,
  logger: Logger,
): DecisionReplicas {
  if (source.kind === 'static') return staticReplicas(source.urls);
  return endpointSliceReplicas({ kube, namespace, service: source.name, portName: source.portName, logger });
}

/** Ready when the apiserver answers and every informer has listed: the ACL API uses nothing else. */
function readinessChecks(store: GrantStore, cache: AclCache): ReadinessCheck[] {
  return [
    { name: KUBERNETES_DEPENDENCY, check: () => store.ping(2_000) },
    {
      name: `${KUBERNETES_DEPENDENCY}-informers`,
      check: async () => {
        const unsynced = cache.unsynced();
        if (unsynced.length > 0) throw new Error(`not synced: ${unsynced.join(', ')}`);
      },
    },
  ];
}

interface RunningAudit {
  store: AuditStore;
  migrator: SchemaMigrator;
  stop(): Promise<void>;
}

/**
 * The audit store, its schema migrated (or migrating, while PostgreSQL is away; or awaited, when a separate step
 * migrates) and pruned past retention.
 */
async function startAudit(config: AuditConfig, logger: Logger): Promise<RunningAudit> {
  const migrator = await startSchemaMigrator({
    connectionString: (config.migrate && config.migrationUrl) || config.databaseUrl,
    migrate: config.migrate,
    logger,
    ...(config.retentionDays ? { retentionDays: config.retentionDays } : {}),
  });
  const store = new AuditStore({
    connectionString: config.databaseUrl,
    ...(config.chainKey ? { chainKey: config.chainKey } : {}),
  });
  if (!config.chainKey) logger.warn(NO_CHAIN_KEY_WARNING);
  const stopPruning = config.retentionDays ? schedulePruning(store, logger) : () => undefined;
  return {
    store,
    migrator,
    async stop() {
      stopPruning();
      migrator.stop();
      await store.close();
    },
  };
}

/** Named in the readiness answer, which stays 200 without it: reads go on, mutations answer 503. */
function auditReadiness(store: AuditStore): ReadinessCheck {
  return { name: POSTGRES_DEPENDENCY, check: () => store.ping(), required: false };
}
