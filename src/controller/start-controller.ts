import { readFileSync } from 'node:fs';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import {
  API_GROUP,
  API_VERSION,
  CATALOG_ITEM_PLURAL,
  type AccessRequest,
  type Agent,
  type CatalogItem,
  type Delegation,
  type Membership,
  type PolicyGrant,
} from '../api/v1alpha1/index.js';
import { listen } from '../http/server.js';
import { createUrnScheme } from '../http/urn.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createMetricsRegistry } from '../observability/metrics.js';
import {
  InternPool,
  Manager,
  objectKey,
  stripForCache,
  watchesMapped,
  type Controller,
  type Informer,
} from '../runtime/index.js';
import { requestJson } from '../runtime/kube-request.js';
import { SpiceDBClient, type SpiceDBClientOptions } from '../spicedb/client.js';
import { loadRegistry } from '../spicedb/registry.js';
import { readSchemaText } from '../spicedb/schema.js';
import { AccessRequestReconciler, accessRequestsPath } from './access-requests/access-request-reconciler.js';
import { AuditStore } from '../audit/audit-store.js';
import { refuseNewerSchemaAt } from '../audit/schema-migrator.js';
import { NO_CHAIN_KEY_WARNING } from '../config/audit-config.js';
import { GrantAuditor } from './audit/grant-auditor.js';
import { CatalogItemReconciler } from './catalog-items/catalog-item-reconciler.js';
import { ClusterWorld } from './cluster-world.js';
import type { ControllerConfig } from './config.js';
import { GrantMetrics, registerMembershipMetrics, registerWriteBatchMetrics } from './controller-metrics.js';
import { DriftResync, type ResyncReport } from './drift-resync.js';
import { EventRecorder } from './event-recorder.js';
import { FencedSpiceDB } from './fenced-spicedb.js';
import { grantCacheTransform } from './grants/cached-grant.js';
import { GrantProjector } from './grants/grant-projector.js';
import { GrantReconciler } from './grants/grant-reconciler.js';
import { grantKey } from '../verdict/grant-verdict.js';
import { GrantWriter, policyGrantsPath } from './grants/grant-writer.js';
import { KeepAliveKubeConfig } from './keep-alive-kube-config.js';
import { KeyedMutex } from './keyed-mutex.js';
import { managedRelations, resyncedRelations } from './managed-relations.js';
import { delegationKind } from './delegations/delegation-projection.js';
import { agentsPath, DelegationWriter, delegationsPath } from './delegations/delegation-writer.js';
import { setupGarbageCollector } from './garbage-collection/garbage-collector.js';
import { ProjectedProjector } from './projected/projected-projector.js';
import { ProjectedReconciler } from './projected/projected-reconciler.js';
import { ProjectedWorld } from './projected/projected-world.js';
import { membershipCacheTransform } from './memberships/cached-membership.js';
import { MembershipProjector } from './memberships/membership-projector.js';
import { MembershipReconciler } from './memberships/membership-reconciler.js';
import { MembershipWorld } from './memberships/membership-world.js';
import { MembershipWriter, membershipsPath } from './memberships/membership-writer.js';
import { ORGANISATION_LABEL } from '../verdict/namespace-authorisation.js';
import { operationalApp } from './operational-app.js';
import { candidateTupleKeys } from '../verdict/projection.js';
import { ProjectionMemory } from './grants/projection-memory.js';
import { ResyncScheduler } from './resync-scheduler.js';
import { SpiceDBGuard } from './spicedb-guard.js';
import { WriteBatcher } from './write-batcher.js';
import type { TupleKey } from '../verdict/tuple-key.js';

export interface StartControllerOptions {
  /** Default: a pino logger at the configured level. */
  logger?: Logger;
  /** Default: a registry of its own, with the process metrics. */
  metricsRegistry?: Registry;
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
  readonly metricsRegistry: Registry;
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

const SHUTDOWN_TIMEOUT_MS = 15_000;
const BY_AGENT_ID = 'agentId';

function loadKubeConfig<T extends KubeConfig>(config: ControllerConfig, kubeConfig: T): T {
  if (config.kubeconfigPath) kubeConfig.loadFromFile(config.kubeconfigPath);
  else kubeConfig.loadFromCluster();
  return kubeConfig;
}

function spicedbClientOptions(config: ControllerConfig['spicedb']): SpiceDBClientOptions {
  const { endpoint, token, transport } = config;
  return {
    endpoint,
    token,
    transport: typeof transport === 'string' ? transport : { caCertificate: readFileSync(transport.caFile) },
  };
}

/**
 * Starts the grant controller: informers on PolicyGrants, CatalogItems, bound Namespaces and the ACL
 * namespace's Memberships, Delegations, Agents and AccessRequests; the PolicyGrant, CatalogItem, Membership,
 * Delegation and AccessRequest reconcilers (while leading); the
 * periodic resync (while leading); the SpiceDB guard; and the operational endpoints. Returns once the
 * endpoints listen (caches sync and leadership come later).
 */
export async function startController(
  config: ControllerConfig,
  options: StartControllerOptions = {},
): Promise<RunningController> {
  const logger = options.logger ?? createLogger({ level: config.logLevel, name: 'controller' });
  const metricsRegistry = options.metricsRegistry ?? createMetricsRegistry({ processMetrics: true });
  const kubeConfig = loadKubeConfig(config, new KubeConfig());
  // The runtime's list, watch and Lease calls keep their own transport; the controller's writes share one pool.
  const writeConfig = loadKubeConfig(config, new KeepAliveKubeConfig());
  const registry = loadRegistry();
  const client = new SpiceDBClient(spicedbClientOptions(config.spicedb));
  const election = config.leaderElection;
  const manager = new Manager({
    kubeConfig,
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
  const selector = config.labelSelector === undefined ? {} : { labelSelector: config.labelSelector };
  // Grants and Memberships, the kinds counted by the hundred thousand, are cached as compact records.
  const pool = new InternPool();
  const grants = manager.informer<PolicyGrant>({
    path: policyGrantsPath(),
    ...selector,
    transform: grantCacheTransform(pool),
  });
  const items = manager.informer<CatalogItem>({
    path: `/apis/${API_GROUP}/${API_VERSION}/${CATALOG_ITEM_PLURAL}`,
    ...selector,
  });
  const namespaces = manager.informer<KubernetesObject>({
    path: '/api/v1/namespaces',
    labelSelector: ORGANISATION_LABEL,
  });
  // Only the Memberships of the ACL namespace count; the label selector narrows grants and items only.
  const membershipCache = manager.informer<Membership>({
    path: membershipsPath(config.aclNamespace),
    transform: membershipCacheTransform(pool),
  });
  const world = new ClusterWorld({ grants, items, namespaces, registry, aclNamespace: config.aclNamespace });
  const memberships = new MembershipWorld(membershipCache);
  // Delegations count only in the ACL namespace too, and only for the owner their Agent object names.
  const delegationCache = manager.informer<Delegation>({ path: delegationsPath(config.aclNamespace) });
  const agentCache = manager.informer<Agent>({ path: agentsPath(config.aclNamespace) });
  const accessRequestCache = manager.informer<AccessRequest>({
    path: accessRequestsPath(config.aclNamespace),
  });
  agentCache.addIndex(BY_AGENT_ID, (agent) => [agent.spec.agentId]);
  delegationCache.addIndex(BY_AGENT_ID, (delegation) => [delegation.spec.agentId]);
  const delegations = new ProjectedWorld(
    delegationCache,
    delegationKind({
      registry,
      ownerOf: (agentId) => agentCache.byIndex(BY_AGENT_ID, agentId)[0]?.spec.ownerId,
    }),
  );
  const memory = new ProjectionMemory();
  const mutex = new KeyedMutex();
  const metrics = new GrantMetrics(metricsRegistry, () => world.allGrants());
  registerMembershipMetrics(metricsRegistry, () => memberships.all());
  const relations = managedRelations(registry);
  const spicedb = new FencedSpiceDB({
    client,
    leaseName: election.name,
    term: () => manager.leadershipTerm(),
    schema: readSchemaText(),
    onFenceLost: () => manager.stepDown(),
    logger,
  });
  manager.beforeEachTerm((signal) => spicedb.beginTerm(signal));
  // Every writer goes through one queue: writes land in the order they were decided, many to a call.
  const store = new WriteBatcher({ store: spicedb, onBatch: registerWriteBatchMetrics(metricsRegistry) });
  const controllers: {
    grants?: Controller<PolicyGrant>;
    items?: Controller<CatalogItem>;
    memberships?: Controller<Membership>;
    delegations?: Controller<Delegation>;
  } = {};

  /** Grants that project one of `keys` check again, without trusting what this process thinks it wrote. */
  const recheckGrantsOf = (keys: TupleKey[], exceptGrantKey?: string): void => {
    for (const key of keys) {
      for (const grant of world.grantsWithTupleKey(key)) {
        const otherKey = grantKey(grant);
        if (otherKey === exceptGrantKey) continue;
        memory.forget(otherKey);
        controllers.grants?.enqueue(otherKey);
      }
    }
  };
  const membershipProjector = new MembershipProjector({
    store,
    world: memberships,
    mutex,
    onTuplesDeleted: (keys, except) => recheckMembershipsOf(keys, except),
  });
  // Members that project a withdrawn tuple (a group's shared ownership), delegations that do (an agent's
  // ownership), write again.
  const recheckMembershipsOf = (keys: TupleKey[], exceptKey?: string): void =>
    membershipProjector.recheck(keys, (key) => controllers.memberships?.enqueue(key), exceptKey);
  const delegationProjector = new ProjectedProjector<Delegation>({
    store,
    world: delegations,
    mutex,
    onTuplesDeleted: (keys, except) => recheckDelegationsOf(keys, except),
  });
  const recheckDelegationsOf = (keys: TupleKey[], exceptKey?: string): void =>
    delegationProjector.recheck(keys, (key) => controllers.delegations?.enqueue(key), exceptKey);
  const resync = new DriftResync({
    store,
    world,
    projected: [memberships, delegations],
    relations: resyncedRelations(registry),
    mutex,
    metrics,
    logger,
    onTuplesDeleted: (keys) => {
      recheckGrantsOf(keys);
      recheckMembershipsOf(keys);
      recheckDelegationsOf(keys);
    },
  });
  const scheduler = new ResyncScheduler({
    resync,
    periodMs: config.resyncPeriodMs,
    isLeader: () => manager.isLeader(),
    hasSynced: () => manager.leadsWithFreshCaches(),
    // Another leader may have written and deleted since this replica last led.
    onStartedLeading: () => {
      memory.clear();
      membershipProjector.forgetAll();
      delegationProjector.forgetAll();
    },
    metrics,
    logger,
  });
  const guard = new SpiceDBGuard({
    store: client,
    ensureSchema: () => spicedb.ensureSchema(),
    isLeader: () => manager.isLeader(),
    periodMs: config.spicedb.probePeriodMs,
    logger,
    onRecovered: () => {
      spicedb.forgetFence();
      memory.clear();
      membershipProjector.forgetAll();
      delegationProjector.forgetAll();
      world.allGrants().forEach((grant) => controllers.grants?.enqueue(grantKey(grant)));
      memberships.all().forEach((membership) => controllers.memberships?.enqueue(objectKey(membership)));
      world.allItems().forEach((item) => controllers.items?.enqueue(item.metadata.name ?? ''));
      scheduler.requestResync();
    },
  });
  const projector = new GrantProjector({
    store,
    world,
    memory,
    mutex,
    relations,
    onTuplesDeleted: recheckGrantsOf,
  });
  const identity = manager.identity ?? 'policy-grant-controller';
  const events = new EventRecorder(writeConfig, identity, logger);
  if (config.auditDatabaseUrl) await refuseNewerSchemaAt(config.auditDatabaseUrl);
  const audit = startGrantAudit(config, { manager, grants, world, logger });
  const grantReconciler = new GrantReconciler({
    world,
    projector,
    memory,
    writer: new GrantWriter(writeConfig),
    events,
    metrics,
    logger,
    onSpiceDBError: guard.nudge,
    trustStatus: () => !guard.wasDisrupted(),
    ...(audit ? { beforeRelease: (grant: PolicyGrant) => audit.auditor.record(grant) } : {}),
  });
  const itemReconciler = new CatalogItemReconciler({
    world,
    store,
    mutex,
    itemObjectTypes: [...new Set(relations.map((relation) => relation.objectType))],
    logger,
    onSpiceDBError: guard.nudge,
  });
  controllers.grants = manager.addController<PolicyGrant>({
    name: 'policygrant',
    for: grants,
    watches: grantTriggers(world, grants, items, namespaces),
    reconcile: grantReconciler.reconcile,
    maxConcurrentReconciles: config.maxConcurrentReconciles,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });
  controllers.items = manager.addController<CatalogItem>({
    name: 'catalogitem',
    for: items,
    reconcile: itemReconciler.reconcile,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });
  const membershipReconciler = new MembershipReconciler({
    world: memberships,
    projector: membershipProjector,
    writer: new MembershipWriter(writeConfig),
    logger,
    onSpiceDBError: guard.nudge,
    trustStatus: () => !guard.wasDisrupted(),
  });
  controllers.memberships = manager.addController<Membership>({
    name: 'membership',
    for: membershipCache,
    reconcile: membershipReconciler.reconcile,
    maxConcurrentReconciles: config.maxConcurrentReconciles,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });

  const delegationReconciler = new ProjectedReconciler<Delegation>({
    world: delegations,
    projector: delegationProjector,
    writer: new DelegationWriter(writeConfig),
    logger,
    onSpiceDBError: guard.nudge,
    trustStatus: () => !guard.wasDisrupted(),
  });
  controllers.delegations = manager.addController<Delegation>({
    name: 'delegation',
    for: delegationCache,
    // An Agent object appeared or names another owner: its delegations count, or stop counting.
    watches: [
      watchesMapped(agentCache, (agent) =>
        delegationCache.byIndex(BY_AGENT_ID, agent.spec.agentId).map((delegation) => objectKey(delegation)),
      ),
    ],
    reconcile: delegationReconciler.reconcile,
    maxConcurrentReconciles: config.maxConcurrentReconciles,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });

  const accessRequestReconciler = new AccessRequestReconciler({
    cache: accessRequestCache,
    kubeConfig: writeConfig,
    events,
    pendingTtlMs: config.accessRequestPendingTtlMs,
    isLeader: () => manager.isLeader(),
    now: () => new Date(),
    ...(audit
      ? {
          audit: {
            store: audit.store,
            organisationOfItem: (itemId: string) => world.itemsWithId(itemId)[0]?.spec.organisationId,
          },
        }
      : {}),
  });
  manager.addController<AccessRequest>({
    name: 'accessrequest',
    for: accessRequestCache,
    reconcile: accessRequestReconciler.reconcile,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });

  await guard.start();
  if (config.garbageCollectionRetentionMs !== undefined) {
    setupGarbageCollector(manager, {
      kubeConfig: writeConfig,
      aclNamespace: config.aclNamespace,
      retentionMs: config.garbageCollectionRetentionMs,
      shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
    });
  }
  manager.start();
  scheduler.start();
  const server = await listen(
    operationalApp({
      urn: createUrnScheme('controller', config.errorNamespace),
      metricsRegistry,
      logger,
      leadership: () => ({ leader: manager.isLeader(), identity: manager.identity }),
      readinessChecks: [
        {
          name: 'kubernetes',
          check: (signal) => requestJson(writeConfig, { method: 'GET', path: '/version', signal }),
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
    lastResync: () => scheduler.last,
    stop: () =>
      (stopping ??= (async () => {
        await scheduler.stop();
        await manager.stop();
        await guard.stop();
        await server.close();
        client.close();
        await audit?.store.close();
        writeConfig.close();
        logger.info('controller stopped');
      })()),
  };
}

/**
 * With DATABASE_URL: a controller of its own (leader only) that records each grant change made outside the
 * ACL API, including those made while no controller ran (its first list shows them), into the audit store.
 */
function startGrantAudit(
  config: ControllerConfig,
  parts: { manager: Manager; grants: Informer<PolicyGrant>; world: ClusterWorld; logger: Logger },
): { auditor: GrantAuditor; store: AuditStore } | undefined {
  const { manager, grants, world, logger } = parts;
  if (!config.auditDatabaseUrl) {
    logger.warn('DATABASE_URL is not set: grant changes made outside the ACL API are not audited');
    return undefined;
  }
  const store = new AuditStore({
    connectionString: config.auditDatabaseUrl,
    maxConnections: 2,
    ...(config.auditChainKey ? { chainKey: config.auditChainKey } : {}),
  });
  const auditor = new GrantAuditor({ store, world, isLeader: () => manager.isLeader(), logger });
  manager.addController<PolicyGrant>({
    name: 'policygrant-audit',
    for: grants,
    reconcile: auditor.reconcile,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });
  logger.info('grant changes made outside the ACL API are audited');
  if (!config.auditChainKey) logger.warn(NO_CHAIN_KEY_WARNING);
  return { auditor, store };
}

/** What makes a grant worth another look besides its own changes. */
function grantTriggers(
  world: ClusterWorld,
  grants: Informer<PolicyGrant>,
  items: Informer<CatalogItem>,
  namespaces: Informer<KubernetesObject>,
) {
  return [
    // Its CatalogItem appeared, changed (organisation, access types) or became ambiguous.
    watchesMapped(items, (item) => world.grantsOnItem(item.spec.itemId).map(grantKey)),
    // Its namespace was bound to an organisation, rebound or unbound.
    watchesMapped(namespaces, (namespace) =>
      world.grantsInNamespace(namespace.metadata?.name ?? '').map(grantKey),
    ),
    // A grant it shares a tuple with changed: a conflict may be over, or a shared tuple must stay.
    watchesMapped(grants, (grant) =>
      candidateTupleKeys(grant.spec, world.registry).flatMap((key) =>
        world.grantsWithTupleKey(key).map(grantKey),
      ),
    ),
  ];
}

async function spicedbWithSchema(client: SpiceDBClient): Promise<void> {
  const { schemaWritten } = await client.health();
  if (!schemaWritten) throw new Error('SpiceDB has no schema');
}

function assertSynced(manager: Manager): void {
  if (!manager.hasSynced()) throw new Error('caches have not listed yet');
}
