import type { Registry as MetricsRegistry } from 'prom-client';
import { CONTROLLER_FIELD_MANAGER } from '../audit/field-managers.js';
import { listen } from '../http/server.js';
import { createUrnScheme } from '../http/urn.js';
import type { Logger } from '../observability/logger.js';
import { serviceObservability, type ObservabilityParts } from '../observability/service-observability.js';
import { Manager, stripForCache } from '../runtime/index.js';
import { KubeClient, loadKubeConfig } from '../kube/index.js';
import { SpiceDBClient } from '../spicedb/client.js';
import { loadRegistry } from '../spicedb/registry.js';
import { readSchemaText } from '../spicedb/schema.js';
import { spicedbClientOptions } from '../spicedb/spicedb-settings.js';
import { setupAccessRequestController } from './access-requests/setup-access-request-controller.js';
import { setupCatalogItemController } from './catalog-items/setup-catalog-item-controller.js';
import type { ControllerConfig } from './controller-config.js';
import { buildControllerCaches } from './controller-caches.js';
import { SHUTDOWN_TIMEOUT_MS, type BaseDeps, type ControllerDeps } from './controller-deps.js';
import { GrantMetrics, registerMembershipMetrics, registerWriteBatchMetrics } from './controller-metrics.js';
import { setupDelegationController } from './delegations/setup-delegation-controller.js';
import type { ResyncReport } from './drift-resync.js';
import { EventRecorder } from './event-recorder.js';
import { FencedSpiceDB } from './fenced-spicedb.js';
import { setupGrantAuditController } from './grants/setup-grant-audit-controller.js';
import { setupGrantController } from './grants/setup-grant-controller.js';
import { KeyedMutex } from './keyed-mutex.js';
import { setupMembershipController } from './memberships/setup-membership-controller.js';
import { setupGarbageCollector } from './garbage-collection/garbage-collector.js';
import { operationalApp } from './operational-app.js';
import { ProjectionCoordinator } from './projection-coordinator.js';
import { setupDriftResync } from './setup-drift-resync.js';
import { setupSpiceDBHealthProber } from './setup-spicedb-health-prober.js';
import { WriteBatcher } from './write-batcher.js';

export interface StartControllerOptions extends ObservabilityParts {
  /**
   * Called once this replica lost leadership (the lease, or the fence in SpiceDB) and its reconcilers were
   * stopped; the entrypoint exits here (EXIT_ON_LOST_LEADERSHIP). Absent: the replica campaigns again.
   */
  onLeadershipLost?: () => void;
}

/** A controller running in this process. */
export interface RunningController {
  /** Base URL of the operational endpoints. */
  readonly url: string;
  readonly metricsRegistry: MetricsRegistry;
  /** The leader-election identity (undefined without election). */
  readonly identity: string | undefined;
  isLeader(): boolean;
  hasSynced(): boolean;
  /** Leads, and this term began: the fence is set in SpiceDB and the caches were listed again. */
  actsAsLeader(): boolean;
  /** The report of the last completed resync. */
  lastResync(): ResyncReport | undefined;
  /** Graceful: reconciles in flight finish, the lease is released, SpiceDB and the port are let go. */
  stop(): Promise<void>;
}

/** The deadline of one Kubernetes call (a watch's is its own). */
const KUBE_TIMEOUT_MS = 30_000;

/**
 * Starts the controller: builds the shared parts (caches, the fenced and batched SpiceDB, the projection
 * coordinator), sets up each runnable and controller, starts the manager and listens on the operational
 * endpoints. Returns once the endpoints listen (caches sync and leadership come later). A new controller gets
 * a `setup<Kind>Controller(manager, deps)` beside its reconciler and one line below.
 */
export async function startController(
  config: ControllerConfig,
  options: StartControllerOptions = {},
): Promise<RunningController> {
  const { logger, metricsRegistry } = serviceObservability(options, {
    name: 'controller',
    logLevel: config.logLevel,
  });
  // One pooled transport for lists, watches, the Lease, Events and writes, all under the controller's field manager.
  const kube = new KubeClient(loadKubeConfig(config.kubeconfigPath), {
    fieldManager: CONTROLLER_FIELD_MANAGER,
    timeoutMs: KUBE_TIMEOUT_MS,
  });
  const manager = newManager(config, kube, options, metricsRegistry, logger);
  const registry = loadRegistry();
  const client = new SpiceDBClient(spicedbClientOptions(config.spicedb));
  const spicedb = new FencedSpiceDB({
    client,
    leaseName: config.leaderElection.name,
    term: () => manager.leadershipTerm(),
    schema: readSchemaText(),
    onFenceLost: () => manager.stepDown(),
    logger,
  });
  manager.beforeEachTerm((signal) => spicedb.beginTerm(signal));
  const caches = buildControllerCaches(manager, config, registry);
  registerMembershipMetrics(metricsRegistry, () => caches.memberships.all());
  const base: BaseDeps = {
    config,
    logger,
    registry,
    kube,
    caches,
    store: new WriteBatcher({ store: spicedb, onBatch: registerWriteBatchMetrics(metricsRegistry) }),
    mutex: new KeyedMutex(),
    projections: new ProjectionCoordinator(),
    events: new EventRecorder(kube, manager.identity ?? 'policy-grant-controller', logger),
    metrics: new GrantMetrics(metricsRegistry, () => caches.cluster.allGrants()),
  };

  const resync = setupDriftResync(manager, base);
  const { prober, health } = setupSpiceDBHealthProber(manager, base, { client, spicedb, resync });
  const audit = await setupGrantAuditController(manager, base);
  const deps: ControllerDeps = { ...base, spicedbHealth: health, audit };
  setupGrantController(manager, deps);
  setupCatalogItemController(manager, deps);
  setupMembershipController(manager, deps);
  setupDelegationController(manager, deps);
  setupAccessRequestController(manager, deps);

  if (config.garbageCollectionRetentionMs !== undefined) {
    setupGarbageCollector(manager, {
      kube,
      aclNamespace: config.aclNamespace,
      retentionMs: config.garbageCollectionRetentionMs,
      shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
    });
  }

  await prober.start();
  manager.start();
  resync.start();
  const server = await listen(
    operationalApp({
      urn: createUrnScheme('controller', config.errorNamespace),
      metricsRegistry,
      logger,
      leadership: () => ({ leader: manager.isLeader(), identity: manager.identity }),
      readinessChecks: [
        {
          name: 'kubernetes',
          check: (signal) => kube.call({ method: 'GET', path: '/version', signal }),
        },
        { name: 'spicedb', check: () => spicedbWithSchema(client) },
        { name: 'caches', check: async () => assertSynced(manager) },
      ],
    }),
    { port: config.http.port, host: config.http.host },
  );
  logger.info(
    { url: server.url, identity: manager.identity, aclNamespace: config.aclNamespace },
    'controller started',
  );

  let stopping: Promise<void> | undefined;
  return {
    url: server.url,
    metricsRegistry,
    identity: manager.identity,
    isLeader: () => manager.isLeader(),
    hasSynced: () => manager.hasSynced(),
    actsAsLeader: () => manager.leadsWithFreshCaches(),
    lastResync: () => resync.last,
    stop: () =>
      (stopping ??= (async () => {
        await resync.stop();
        await manager.stop();
        await prober.stop();
        await server.close();
        client.close();
        await audit?.store.close();
        kube.close();
        logger.info('controller stopped');
      })()),
  };
}

function newManager(
  config: ControllerConfig,
  kube: KubeClient,
  options: StartControllerOptions,
  metricsRegistry: MetricsRegistry,
  logger: Logger,
): Manager {
  const election = config.leaderElection;
  return new Manager({
    kube,
    registry: metricsRegistry,
    logger,
    gracefulShutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
    defaultTransform: stripForCache,
    ...(options.onLeadershipLost ? { onLeadershipLost: options.onLeadershipLost } : {}),
    ...(election.enabled
      ? {
          leaderElection: {
            namespace: election.namespace,
            name: election.name,
            leaseDurationMs: election.leaseDurationMs,
            renewDeadlineMs: election.renewDeadlineMs,
            retryPeriodMs: election.retryPeriodMs,
          },
        }
      : {}),
  });
}

async function spicedbWithSchema(client: SpiceDBClient): Promise<void> {
  const { schemaWritten } = await client.health();
  if (!schemaWritten) throw new Error('SpiceDB has no schema');
}

function assertSynced(manager: Manager): void {
  if (!manager.hasSynced()) throw new Error('caches have not listed yet');
}
