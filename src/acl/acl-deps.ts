import type { Registry as MetricsRegistry } from 'prom-client';
import type { UrnScheme } from '../http/urn.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { Logger } from '../observability/logger.js';
import type { AclCache } from './acl-cache.js';
import type { AclApiConfig } from './acl-config.js';
import type { UserQuotas } from './user-quotas.js';

/**
 * What every setup of the ACL API's parts (`setupPolicies(deps)`, `setupMemberships(deps)`, …) receives: the
 * parts they share, built once by startAclApi.
 */
export interface AclDeps {
  config: AclApiConfig;
  logger: Logger;
  metricsRegistry: MetricsRegistry;
  urn: UrnScheme;
  /** The one transport to Kubernetes, under the ACL API's field manager. */
  kube: KubeClient;
  /** The informer cache every read answers from. */
  cache: AclCache;
  now: () => Date;
  /** How long a create or delete waits for the informer to see its write before it answers anyway. */
  readYourWriteTimeoutMs: number;
  /** Per-user object quotas. */
  quotas: UserQuotas;
}
