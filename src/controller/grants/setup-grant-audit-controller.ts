import type { PolicyGrant } from '../../api/v1alpha1/index.js';
import { AuditStore } from '../../audit/audit-store.js';
import { refuseNewerSchemaAt } from '../../audit/schema-migrator.js';
import { NO_CHAIN_KEY_WARNING } from '../../config/audit-config.js';
import type { Manager } from '../../runtime/index.js';
import { GrantAuditor } from '../audit/grant-auditor.js';
import { SHUTDOWN_TIMEOUT_MS, type BaseDeps, type GrantAudit } from '../controller-deps.js';

/**
 * With DATABASE_URL: a controller of its own (leader only) that records each grant change made outside the
 * ACL API, including those made while no controller ran (its first list shows them), into the audit store.
 * Refuses to start on an audit schema newer than this code knows.
 */
export async function setupGrantAuditController(
  manager: Manager,
  deps: Pick<BaseDeps, 'config' | 'caches' | 'logger'>,
): Promise<GrantAudit | undefined> {
  const { config, caches, logger } = deps;
  if (!config.auditDatabaseUrl) {
    logger.warn('DATABASE_URL is not set: grant changes made outside the ACL API are not audited');
    return undefined;
  }
  await refuseNewerSchemaAt(config.auditDatabaseUrl);
  const store = new AuditStore({
    connectionString: config.auditDatabaseUrl,
    maxConnections: 2,
    ...(config.auditChainKey ? { chainKey: config.auditChainKey } : {}),
  });
  const auditor = new GrantAuditor({
    store,
    cluster: caches.cluster,
    actors: config.auditActors,
    isLeader: () => manager.isLeader(),
    logger,
  });
  manager.addController<PolicyGrant>({
    name: 'policygrant-audit',
    for: caches.grants,
    reconcile: auditor.reconcile,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });
  logger.info('grant changes made outside the ACL API are audited');
  if (!config.auditChainKey) logger.warn(NO_CHAIN_KEY_WARNING);
  return { auditor, store };
}
