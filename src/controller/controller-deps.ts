import { RELATIONSHIPS_FINALIZER } from '../api/v1alpha1/index.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { AuditStore } from '../audit/audit-store.js';
import type { GrantAuditor } from './audit/grant-auditor.js';
import type { Registry } from '../spicedb/registry.js';
import type { Logger } from '../observability/logger.js';
import type { ControllerCaches } from './controller-caches.js';
import type { ControllerConfig } from './controller-config.js';
import type { GrantMetrics } from './controller-metrics.js';
import type { EventRecorder } from './event-recorder.js';
import type { KeyedMutex } from './keyed-mutex.js';
import type { ProjectionCoordinator } from './projection-coordinator.js';
import type { SpiceDBHealth } from './reconcile-flow.js';
import type { RelationshipStore } from './relationship-store.js';

/** How long a stopping controller lets its reconciles in flight finish. */
export const SHUTDOWN_TIMEOUT_MS = 15_000;

/** The deadline of one status or finalizer write. */
export const WRITE_TIMEOUT_MS = 15_000;

/** Grants, Memberships and Delegations: their relationships go before the object does (the finalizer). */
export const RELATIONSHIPS_WRITES = { finalizer: RELATIONSHIPS_FINALIZER, timeoutMs: WRITE_TIMEOUT_MS };

/**
 * What every `setup<Kind>Controller(manager, deps)` receives: the parts the controllers share, built once by
 * startController. A setup builds its reconciler from these, adds its controller to the manager with the
 * watches that trigger it, and binds its queue to the projection coordinator if it projects.
 */
export interface ControllerDeps {
  config: ControllerConfig;
  logger: Logger;
  registry: Registry;
  /** The one transport to Kubernetes, under the controller's field manager. */
  kube: KubeClient;
  caches: ControllerCaches;
  /** SpiceDB behind the write queue: writes land in the order they were decided, many to a call. */
  store: RelationshipStore;
  /** Serialises decisions on one SpiceDB object across kinds and the resync. */
  mutex: KeyedMutex;
  projections: ProjectionCoordinator;
  spicedbHealth: SpiceDBHealth;
  events: EventRecorder;
  metrics: GrantMetrics;
  /** With DATABASE_URL: the audit of grant changes and its store; undefined without. */
  audit: GrantAudit | undefined;
}

/** The shared parts that exist before the SpiceDB health prober and the audit: what runnables receive. */
export type BaseDeps = Omit<ControllerDeps, 'spicedbHealth' | 'audit'>;

export interface GrantAudit {
  auditor: GrantAuditor;
  store: AuditStore;
}
