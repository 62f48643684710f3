import type { KubeConfig } from '@kubernetes/client-node';
import type { Express } from 'express';
import { ACL_API_FIELD_MANAGER } from '../audit/field-managers.js';
import { createAuthenticators } from '../auth/authenticators.js';
import { withVerifiedTokenCache } from '../auth/verified-token-cache.js';
import type { Authenticators } from '../auth/verifiers.js';
import { createHttpApp } from '../http/app.js';
import { apiAuthentication } from '../http/auth-middleware.js';
import { Drain } from '../http/drain.js';
import type { OpenApiDocument } from '../http/openapi/route-definition.js';
import type { RouteTable } from '../http/openapi/route-table.js';
import { limitedAuthentication } from '../http/rate-limit/limited-authentication.js';
import { NO_REQUEST_LIMITS } from '../http/rate-limit/request-limits.js';
import type { ReadinessCheck } from '../http/readiness.js';
import { listen } from '../http/server.js';
import { createUrnScheme } from '../http/urn.js';
import { KubeClient } from '../kube/kube-client.js';
import { loadKubeConfig } from '../kube/kube-config.js';
import { serviceObservability, type ObservabilityParts } from '../observability/service-observability.js';
import { loadRegistry } from '../spicedb/registry.js';
import { setupAccessRequests } from './access-requests/setup-access-requests.js';
import { AclCache } from './acl-cache.js';
import { DEFAULT_READ_YOUR_WRITE_TIMEOUT_MS, type AclApiConfig } from './acl-config.js';
import type { AclDeps } from './acl-deps.js';
import { aclDocument } from './acl-document.js';
import { aclRouteClass } from './acl-route-classes.js';
import { aclRoutes, type AclServices } from './acl-routes.js';
import type { AuditedRoutes } from './audit/audited-routes.js';
import { setupAudit } from './audit/setup-audit.js';
import type { DecisionReplicas } from './decision-replicas/decision-replicas.js';
import { setupDecisionReplicas } from './decision-replicas/setup-decision-replicas.js';
import { setupDelegations } from './delegations/setup-delegations.js';
import { Explainer } from './explain/explainer.js';
import { KUBERNETES_DEPENDENCY } from './kube-errors.js';
import { setupMemberships } from './memberships/setup-memberships.js';
import { registerGrantMetrics } from './policies/grant-metrics.js';
import type { GrantStore } from './policies/grant-store.js';
import { setupPolicies } from './policies/setup-policies.js';
import { DEFAULT_USER_QUOTAS } from './user-quotas.js';

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

export interface StartAclApiOptions extends ObservabilityParts {
  /** Default: the kubeconfig file `config.kubeconfigPath` names, or the in-cluster ServiceAccount. */
  kubeConfig?: KubeConfig;
  /** Check every answer against its declared schema (tests). */
  validateResponses?: boolean;
  /** False: mutations are not recorded. Only for `npm run bench:audit`, which measures what auditing adds. */
  auditing?: boolean;
}

/**
 * Starts the ACL API: builds the shared parts (the Kubernetes client, the informer cache, the callers'
 * authenticators), sets up each part of the API, then starts the informers and listens. Resolves once it
 * listens (not ready until the informers have listed). A new part gets a `setup<Part>(deps)` in its folder and
 * one line below.
 */
export async function startAclApi(
  config: AclApiConfig,
  options: StartAclApiOptions = {},
): Promise<RunningAclApi> {
  const { logger, metricsRegistry } = serviceObservability(options, {
    name: 'acl-api',
    logLevel: config.logLevel,
  });
  const authenticators = await createAuthenticators(config.auth, { metricsRegistry, logger });
  const kube = setupKubeClient(config, options.kubeConfig);
  const cache = new AclCache(kube, config.namespace, loadRegistry(), logger);
  const deps: AclDeps = {
    config,
    logger,
    metricsRegistry,
    urn: createUrnScheme('acl', config.errorNamespace),
    kube,
    cache,
    now: () => new Date(),
    readYourWriteTimeoutMs: config.readYourWriteTimeoutMs ?? DEFAULT_READ_YOUR_WRITE_TIMEOUT_MS,
    quotas: config.quotas ?? DEFAULT_USER_QUOTAS,
  };

  const audit = await setupAudit(deps, options.auditing !== false);
  const policies = setupPolicies(deps);
  const { agents, delegations } = setupDelegations(deps, policies.verifier);
  const replicas = setupDecisionReplicas(deps);
  const services: AclServices = {
    urn: deps.urn,
    cache,
    ...policies,
    memberships: setupMemberships(deps),
    agents,
    delegations,
    accessRequests: setupAccessRequests(deps, policies),
    explainer: new Explainer({ cache, kube, namespace: config.namespace, now: deps.now }),
    audited: audit.audited,
    ...(replicas ? { replicaConfirmations: replicas.confirmations } : {}),
    auditReads: audit.reads,
  };
  const routes = aclRoutes(services, {
    authentication: callerAuthentication(deps, authenticators),
    ...(options.validateResponses === undefined ? {} : { validateResponses: options.validateResponses }),
  });
  const document = aclDocument(routes, config.basePath, deps.urn);
  registerGrantMetrics(metricsRegistry, cache, deps.now);
  const drain = new Drain(config.drainMs);
  const app = createHttpApp({
    urn: deps.urn,
    logger,
    metricsRegistry,
    readinessChecks: [...readinessChecks(policies.store, cache), audit.readiness],
    drain,
    openApiDocument: document,
    ...(config.trustProxy === undefined ? {} : { trustProxy: config.trustProxy }),
    routers: [{ path: config.basePath, router: services.audited.withRefusalsRecorded(routes.router()) }],
  });

  cache.start();
  replicas?.confirmations.start();
  const synced = await cache.waitForSync(config.startupSyncTimeoutMs ?? DEFAULT_STARTUP_SYNC_TIMEOUT_MS);
  if (!synced) logger.warn({ unsynced: cache.unsynced() }, 'serving before the caches synced: not ready yet');
  const stopClients = async () => {
    await cache.stop();
    await replicas?.confirmations.stop();
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
    audited: services.audited,
    document,
    ...(replicas ? { decisionReplicas: replicas.replicas } : {}),
    async stop() {
      await server.close();
      await stopClients();
    },
  };
}

/** One pooled transport, naming the ACL API in the objects' managedFields: the controller does not audit these changes again. */
function setupKubeClient(config: AclApiConfig, kubeConfig: KubeConfig | undefined): KubeClient {
  return new KubeClient(kubeConfig ?? loadKubeConfig(config.kubeconfigPath), {
    fieldManager: ACL_API_FIELD_MANAGER,
    ...(config.kubeTimeoutMs === undefined ? {} : { timeoutMs: config.kubeTimeoutMs }),
  });
}

/** Verified tokens cached, failed attempts and each subject's requests limited per route class. */
function callerAuthentication(deps: AclDeps, authenticators: Authenticators) {
  return limitedAuthentication(apiAuthentication(withVerifiedTokenCache(authenticators)), {
    urn: deps.urn,
    metricsRegistry: deps.metricsRegistry,
    limits: deps.config.limits ?? NO_REQUEST_LIMITS,
    classify: aclRouteClass,
  });
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
