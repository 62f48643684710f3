import { z } from 'zod';
import type { AuthenticatorSettings } from '../auth/authenticators.js';
import { auditConfig, auditEnvironment, type AuditConfig } from '../config/audit-config.js';
import { authSettingsFromEnvironment } from '../config/auth-config.js';
import { commonEnvironment } from '../config/common-config.js';
import { decisionClientRoles } from '../config/decision-clients.js';
import { drainMs, shutdownEnvironment } from '../config/shutdown-config.js';
import type { TrustedProxies } from '../http/client-address.js';
import { commaList, ConfigurationError, duration, port, readEnvironment } from '../config/environment.js';
import { aclRequestLimits, rateLimitVariable } from '../config/rate-limit-config.js';
import type { RateLimit, RequestLimits } from '../http/rate-limit/request-limits.js';
import { DEFAULT_KUBE_TIMEOUT_MS } from '../kube/kube-client.js';
import { DEFAULT_USER_QUOTAS, type UserQuotas } from './user-quotas.js';

export const DEFAULT_READ_YOUR_WRITE_TIMEOUT_MS = 5_000;
export const DEFAULT_CLAIM_PENDING_TIMEOUT_MS = 60_000;
/** Refusals (403) recorded per actor: a person mistyping an id stays far below it, a flood does not. */
export const DEFAULT_AUDIT_REFUSAL_LIMIT = '30/1m';

/** Variables of the ACL API beyond the shared ones (common, auth). It holds no SpiceDB credential. */
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
  /** Refusals recorded in the audit trail per actor and window; the excess is counted, not recorded. */
  AUDIT_REFUSAL_LIMIT: rateLimitVariable(DEFAULT_AUDIT_REFUSAL_LIMIT),
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
  logLevel: string;
  /** A kubeconfig file; absent: the in-cluster ServiceAccount. */
  kubeconfigPath?: string;
  /** How callers authenticate (JWT, and Basic application credentials). */
  auth: AuthenticatorSettings;
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
  /** Refusals (403) recorded per actor and window (the excess is counted); every one when absent. */
  refusalLimit?: RateLimit;
  /** Express's `trust proxy`: which proxies' X-Forwarded-For gives the client address; none when absent. */
  trustProxy?: TrustedProxies;
}

/** The ACL API's configuration from environment variables (docs/acl-api.md): data, the live parts are startAclApi's. */
export function aclConfigFromEnvironment(env: NodeJS.ProcessEnv = process.env): AclApiConfig {
  const common = readEnvironment(commonEnvironment, env);
  const acl = readEnvironment(aclEnvironment, env);
  const auth = authSettingsFromEnvironment(env);
  const audit = readEnvironment(auditEnvironment, env);
  const shutdown = readEnvironment(shutdownEnvironment, env);
  return {
    port: acl.ACL_PORT,
    host: acl.ACL_HOST,
    basePath: acl.ACL_BASE_PATH,
    namespace: common.ACL_NAMESPACE,
    errorNamespace: common.ERROR_NAMESPACE,
    logLevel: common.LOG_LEVEL,
    ...(common.KUBECONFIG ? { kubeconfigPath: common.KUBECONFIG } : {}),
    auth,
    limits: aclRequestLimits(env),
    ...(acl.AUDIT_REFUSAL_LIMIT === undefined ? {} : { refusalLimit: acl.AUDIT_REFUSAL_LIMIT }),
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
