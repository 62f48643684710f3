import { z } from 'zod';
import { auditEnvironment } from '../config/audit-config.js';
import { commonEnvironment } from '../config/common-config.js';
import { booleanFlag, ConfigurationError, duration, port, readEnvironment } from '../config/environment.js';
import { spicedbEnvironment, spicedbSettings } from '../config/spicedb-config.js';
import type { SpiceDBSettings } from '../spicedb/spicedb-settings.js';
import { actorEnvironment, actorSource, type ActorSource } from './audit/kubernetes-actor.js';

/** The controller's configuration, as data; `controllerConfigFromEnvironment` reads it from environment variables. */
export interface ControllerConfig {
  /** A kubeconfig file; absent: the in-cluster service account. */
  kubeconfigPath?: string;
  spicedb: SpiceDBSettings & {
    /** Between health probes, which notice a SpiceDB that lost its schema and data. */
    probePeriodMs: number;
  };
  /** The ACL API's namespace: grants there are authorised for every item. */
  aclNamespace: string;
  http: { host: string; port: number };
  /** Period of the full resync of SpiceDB against the custom resources. */
  resyncPeriodMs: number;
  leaderElection: {
    enabled: boolean;
    namespace: string;
    /** The Lease's name. */
    name: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
    /** The entrypoint exits (status 1) when leadership is lost, as controller-runtime; false: campaign again. */
    exitOnLoss: boolean;
  };
  /**
   * Only PolicyGrants and CatalogItems with these labels are watched. The resync still treats every managed
   * tuple in SpiceDB as its own: give each selector its own SpiceDB (tests do).
   */
  labelSelector?: string;
  maxConcurrentReconciles: number;
  /** How long an AccessRequest may stay PENDING before the controller expires it. */
  accessRequestPendingTtlMs: number;
  /** How long finished objects stay before garbage collection deletes them; absent: no garbage collection. */
  garbageCollectionRetentionMs?: number;
  logLevel: string;
  /** The `<ns>` of `urn:<ns>:controller:<Kind>` (ERROR_NAMESPACE, as the other services); default `dx`. */
  errorNamespace?: string;
  /**
   * The audit store (DATABASE_URL, a member of the writer role): grant changes made outside the ACL API are
   * recorded there. Absent: the controller audits nothing (and says so at start-up).
   */
  auditDatabaseUrl?: string;
  /** The key of the audit records' MACs (AUDIT_CHAIN_KEY), as the ACL API's. */
  auditChainKey?: Buffer;
  /** Where the audit takes the actor of a grant change made in Kubernetes (AUDIT_ACTOR_FROM). */
  auditActors: ActorSource;
}

const atLeast = (fallback: string, minimumMs: number) =>
  z
    .string()
    .default(fallback)
    .pipe(duration)
    .pipe(z.number().min(minimumMs, `must be at least ${minimumMs} ms`));

const dnsLabel = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'expected a Kubernetes name (lowercase letters, digits and -)')
  .max(63);

const nonEmpty = z.string().min(1, 'must not be empty');

const environmentSchema = z.object({
  ...commonEnvironment.shape,
  ...spicedbEnvironment.shape,
  SPICEDB_PROBE_PERIOD: atLeast('5s', 100),
  CONTROLLER_HOST: nonEmpty.default('0.0.0.0'),
  CONTROLLER_PORT: port.default(8082),
  RESYNC_PERIOD: atLeast('10m', 1_000),
  LEADER_ELECTION: booleanFlag.default(true),
  LEADER_ELECTION_NAMESPACE: dnsLabel.optional(),
  LEADER_ELECTION_ID: dnsLabel.default('policy-grant-controller'),
  LEASE_DURATION: atLeast('15s', 1_000),
  RENEW_DEADLINE: atLeast('10s', 1),
  RETRY_PERIOD: atLeast('2s', 1),
  EXIT_ON_LOST_LEADERSHIP: booleanFlag.default(true),
  WATCH_LABEL_SELECTOR: nonEmpty.optional(),
  MAX_CONCURRENT_RECONCILES: z.coerce.number().int().min(1).max(64).default(16),
  ACCESS_REQUEST_PENDING_TTL: atLeast('168h', 1_000),
  GARBAGE_COLLECTION: z.enum(['true', 'false']).default('true'),
  GARBAGE_COLLECTION_RETENTION: atLeast('720h', 1_000),
  DATABASE_URL: auditEnvironment.shape.DATABASE_URL.optional(),
  AUDIT_CHAIN_KEY: auditEnvironment.shape.AUDIT_CHAIN_KEY,
  ...actorEnvironment.shape,
});

export type ControllerEnvironment = Partial<Record<keyof z.input<typeof environmentSchema>, string>>;

/** The controller's configuration from environment variables (docs/controller.md); throws ConfigurationError naming every variable that is wrong. */
export function controllerConfigFromEnvironment(env: NodeJS.ProcessEnv = process.env): ControllerConfig {
  const e = readEnvironment(environmentSchema, env);
  if (e.LEASE_DURATION % 1000 !== 0) throw new ConfigurationError('LEASE_DURATION: must be whole seconds');
  if (!(e.LEASE_DURATION > e.RENEW_DEADLINE && e.RENEW_DEADLINE > 1.2 * e.RETRY_PERIOD)) {
    throw new ConfigurationError(
      'leader election needs LEASE_DURATION > RENEW_DEADLINE > 1.2 × RETRY_PERIOD',
    );
  }
  return {
    ...(e.KUBECONFIG ? { kubeconfigPath: e.KUBECONFIG } : {}),
    spicedb: { ...spicedbSettings(e), probePeriodMs: e.SPICEDB_PROBE_PERIOD },
    aclNamespace: e.ACL_NAMESPACE,
    http: { host: e.CONTROLLER_HOST, port: e.CONTROLLER_PORT },
    resyncPeriodMs: e.RESYNC_PERIOD,
    leaderElection: {
      enabled: e.LEADER_ELECTION,
      namespace: e.LEADER_ELECTION_NAMESPACE ?? e.ACL_NAMESPACE,
      name: e.LEADER_ELECTION_ID,
      leaseDurationMs: e.LEASE_DURATION,
      renewDeadlineMs: e.RENEW_DEADLINE,
      retryPeriodMs: e.RETRY_PERIOD,
      exitOnLoss: e.EXIT_ON_LOST_LEADERSHIP,
    },
    ...(e.WATCH_LABEL_SELECTOR ? { labelSelector: e.WATCH_LABEL_SELECTOR } : {}),
    maxConcurrentReconciles: e.MAX_CONCURRENT_RECONCILES,
    accessRequestPendingTtlMs: e.ACCESS_REQUEST_PENDING_TTL,
    ...(e.GARBAGE_COLLECTION === 'true'
      ? { garbageCollectionRetentionMs: e.GARBAGE_COLLECTION_RETENTION }
      : {}),
    logLevel: e.LOG_LEVEL,
    errorNamespace: e.ERROR_NAMESPACE,
    ...(e.DATABASE_URL ? { auditDatabaseUrl: e.DATABASE_URL } : {}),
    ...(e.AUDIT_CHAIN_KEY ? { auditChainKey: e.AUDIT_CHAIN_KEY } : {}),
    auditActors: actorSource(e),
  };
}
