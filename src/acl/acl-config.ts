import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry as MetricsRegistry } from 'prom-client';
import { z } from 'zod';
import type { Authenticators } from '../auth/middleware.js';
import { auditConfig, auditEnvironment, type AuditConfig } from '../config/audit-config.js';
import type { ConcurrencyBound } from '../auth/concurrency-gate.js';
import { authEnvironment, type AuthEnvironment } from '../config/auth-config.js';
import { commonEnvironment } from '../config/common-config.js';
import { decisionClientRoles } from '../config/decision-clients.js';
import { drainMs, shutdownEnvironment } from '../config/shutdown-config.js';
import type { TrustProxy } from '../config/common-config.js';
import { commaList, ConfigurationError, duration, port, readEnvironment } from '../config/environment.js';
import { aclRequestLimits, scryptBound } from '../config/rate-limit-config.js';
import type { RequestLimits } from '../http/rate-limit/request-limits.js';
import { DEFAULT_KUBE_TIMEOUT_MS } from '../kube/kube-client.js';
import type { Logger } from '../observability/logger.js';

export const DEFAULT_READ_YOUR_WRITE_TIMEOUT_MS = 5_000;
export const DEFAULT_CLAIM_PENDING_TIMEOUT_MS = 60_000;
import { DEFAULT_USER_QUOTAS, type UserQuotas } from './user-quotas.js';

/** Variables of the ACL API beyond the shared ones (common, auth, KUBECONFIG). It holds no SpiceDB credential. */
export const aclEnvironment = z.object({
  ACL_PORT: port.default(8080),
  ACL_HOST: z.string().min(1).default('0.0.0.0'),
  /** Where the routes are mounted; a gateway maps its public prefix onto it by strip-prefix. */
  ACL_BASE_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)+$|^\/$/, 'a path such as /v2, without a trailing slash')
    .default('/v2'),
  /** How long a create or delete waits for the informer to see its write before it answers anyway. */
  ACL_READ_YOUR_WRITE_TIMEOUT: duration.default(DEFAULT_READ_YOUR_WRITE_TIMEOUT_MS),
  /** After this long, a pending claim whose grant never appeared is taken for abandoned. */
  ACL_CLAIM_PENDING_TIMEOUT: duration.default(DEFAULT_CLAIM_PENDING_TIMEOUT_MS),
  /** Deadline of each call to the kube-apiserver. */
  ACL_KUBE_TIMEOUT: duration.default(DEFAULT_KUBE_TIMEOUT_MS),
  /** Per-user quotas on the objects a user creates (user-quotas.ts): existing objects, finished ones included. */
  ACL_MAX_DELEGATIONS_PER_USER: z.coerce.number().int().positive().default(DEFAULT_USER_QUOTAS.delegations),
  ACL_MAX_AGENTS_PER_USER: z.coerce.number().int().positive().default(DEFAULT_USER_QUOTAS.agents),
  ACL_MAX_ACCESS_REQUESTS_PER_USER: z.coerce
    .number()
    .int()
    .positive()
    .default(DEFAULT_USER_QUOTAS.accessRequests),
  /** Roles of the enforcement points, which may verify any user's access (as they may call /v1/check). */
  DECISION_CLIENT_ROLES: decisionClientRoles,
  /** The decision replicas that confirm a change before `Prefer: wait` reports it: a fixed list of base URLs… */
  DECISION_REPLICAS: commaList
    .pipe(z.array(z.url({ protocol: /^https?$/, error: 'base URLs such as http://127.0.0.1:8081' })))
    .optional(),
  /** …or the decision Service in ACL_NAMESPACE, whose Ready endpoints are followed on its EndpointSlices. */
  DECISION_SERVICE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a Service name')
    .optional(),
  /** The name of that Service's port. */
  DECISION_SERVICE_PORT_NAME: z.string().default('http'),
});

/** Where the ACL API finds the decision replicas that must confirm a change (src/acl/decision-replicas). */
export type DecisionReplicaSource =
  { kind: 'static'; urls: readonly string[] } | { kind: 'service'; name: string; portName: string };

export interface AclApiConfig {
  port: number;
  host: string;
  basePath: string;
  /** Where grants and claims are written. */
  namespace: string;
  /** `<ns>` of `urn:<ns>:acl:<Kind>`. */
  errorNamespace: string;
  logger: Logger | { level: string };
  kubeConfig: KubeConfig;
  authenticators: Authenticators;
  /** The audit store every mutation is recorded in (docs/audit.md). */
  audit: AuditConfig;
  readYourWriteTimeoutMs?: number;
  claimPendingTimeoutMs?: number;
  kubeTimeoutMs?: number;
  /** How long start-up waits for the informers to list before it serves anyway (not ready until they do). */
  startupSyncTimeoutMs?: number;
  /** How long stop() lets in-flight requests finish. */
  closeGraceMs?: number;
  /** How long stop() keeps serving after readiness failed, before it stops accepting; default 0. */
  drainMs?: number;
  /** Roles of the callers that may verify any user's access; `decision_client` when absent. */
  decisionClientRoles?: readonly string[];
  /** Per-user object quotas; DEFAULT_USER_QUOTAS when absent. */
  quotas?: UserQuotas;
  /** The decision replicas `Prefer: wait` asks to confirm a change; none asked when absent. */
  decisionReplicas?: DecisionReplicaSource;
  /** Per-subject and failed-authentication limits; none when absent. */
  limits?: RequestLimits;
  /** Express's `trust proxy`: which proxies' X-Forwarded-For gives the client address; none when absent. */
  trustProxy?: TrustProxy;
  /** The API's registry (the Basic verifier counts into it too); a new one with process metrics when absent. */
  metricsRegistry?: MetricsRegistry;
}

/**
 * What the environment configures the ACL API with, as data: the entrypoint builds the live parts from it (the
 * kubeconfig, the authenticators, the logger, the metrics registry).
 */
export interface AclSettings extends Omit<
  AclApiConfig,
  'kubeConfig' | 'authenticators' | 'logger' | 'metricsRegistry'
> {
  auth: AuthEnvironment;
  /** The Basic verifier's scrypt bound. */
  scrypt: ConcurrencyBound;
  logLevel: string;
}

/** The ACL API's settings from environment variables (docs/acl-api.md). */
export function aclSettingsFromEnvironment(env: NodeJS.ProcessEnv = process.env): AclSettings {
  const common = readEnvironment(commonEnvironment, env);
  const acl = readEnvironment(aclEnvironment, env);
  const auth = readEnvironment(authEnvironment, env);
  const audit = readEnvironment(auditEnvironment, env);
  const shutdown = readEnvironment(shutdownEnvironment, env);
  return {
    port: acl.ACL_PORT,
    host: acl.ACL_HOST,
    basePath: acl.ACL_BASE_PATH,
    namespace: common.ACL_NAMESPACE,
    errorNamespace: common.ERROR_NAMESPACE,
    logLevel: common.LOG_LEVEL,
    auth,
    scrypt: scryptBound(env),
    limits: aclRequestLimits(env),
    ...(common.TRUST_PROXY === undefined ? {} : { trustProxy: common.TRUST_PROXY }),
    audit: auditConfig(audit),
    readYourWriteTimeoutMs: acl.ACL_READ_YOUR_WRITE_TIMEOUT,
    claimPendingTimeoutMs: acl.ACL_CLAIM_PENDING_TIMEOUT,
    kubeTimeoutMs: acl.ACL_KUBE_TIMEOUT,
    decisionClientRoles: acl.DECISION_CLIENT_ROLES,
    ...decisionReplicaSource(acl),
    quotas: {
      delegations: acl.ACL_MAX_DELEGATIONS_PER_USER,
      agents: acl.ACL_MAX_AGENTS_PER_USER,
      accessRequests: acl.ACL_MAX_ACCESS_REQUESTS_PER_USER,
    },
    drainMs: drainMs(shutdown),
  };
}

function decisionReplicaSource(acl: z.output<typeof aclEnvironment>): {
  decisionReplicas?: DecisionReplicaSource;
} {
  const { DECISION_REPLICAS: urls, DECISION_SERVICE: name } = acl;
  if (urls && name) {
    throw new ConfigurationError(
      'invalid configuration: set DECISION_REPLICAS or DECISION_SERVICE, not both',
    );
  }
  if (urls && urls.length > 0) return { decisionReplicas: { kind: 'static', urls } };
  if (name) return { decisionReplicas: { kind: 'service', name, portName: acl.DECISION_SERVICE_PORT_NAME } };
  return {};
}
