import { AuditReader } from '../../audit/audit-reader.js';
import { AuditStore, POSTGRES_DEPENDENCY } from '../../audit/audit-store.js';
import { schedulePruning } from '../../audit/retention.js';
import { startSchemaMigrator, type SchemaMigrator } from '../../audit/schema-migrator.js';
import { NO_CHAIN_KEY_WARNING, type AuditConfig } from '../../config/audit-config.js';
import type { ReadinessCheck } from '../../http/readiness.js';
import type { Logger } from '../../observability/logger.js';
import type { AclDeps } from '../acl-deps.js';
import type { AclServices } from '../acl-routes.js';
import { AuditedRoutes } from './audited-routes.js';
import { MutationAuditor, NO_AUDIT, type Auditor } from './mutation-auditor.js';
import { limitRefusals } from './refusal-limit.js';

/** The audit's part of the ACL API: the store, the routes that record into it, and the routes that read it. */
export interface AclAudit {
  audited: AuditedRoutes;
  reads: AclServices['auditReads'];
  /** Named in the readiness answer, which stays 200 without it: reads go on, mutations answer 503. */
  readiness: ReadinessCheck;
  stop(): Promise<void>;
}

/**
 * The audit store, its schema migrated (or migrating, while PostgreSQL is away; or awaited, when a separate step
 * migrates) and pruned past retention. `auditing: false` records nothing (only `npm run bench:audit`, which
 * measures what auditing adds).
 */
export async function setupAudit(deps: AclDeps, auditing = true): Promise<AclAudit> {
  const { config, logger } = deps;
  const migrator = await startMigrator(config.audit, logger);
  const store = new AuditStore({
    connectionString: config.audit.databaseUrl,
    ...(config.audit.chainKey ? { chainKey: config.audit.chainKey } : {}),
  });
  if (!config.audit.chainKey) logger.warn(NO_CHAIN_KEY_WARNING);
  const stopPruning = config.audit.retentionDays ? schedulePruning(store, logger) : () => undefined;
  return {
    audited: new AuditedRoutes(auditing ? auditor(deps, store, migrator) : NO_AUDIT),
    reads: {
      reader: new AuditReader(store.pool),
      ping: () => store.ping(),
      ...(config.audit.chainKey ? { chainKey: config.audit.chainKey } : {}),
    },
    readiness: { name: POSTGRES_DEPENDENCY, check: () => store.ping(), required: false },
    async stop() {
      stopPruning();
      migrator.stop();
      await store.close();
    },
  };
}

function startMigrator(config: AuditConfig, logger: Logger): Promise<SchemaMigrator> {
  return startSchemaMigrator({
    connectionString: (config.migrate && config.migrationUrl) || config.databaseUrl,
    migrate: config.migrate,
    logger,
    ...(config.retentionDays ? { retentionDays: config.retentionDays } : {}),
  });
}

/** What the audited routes record through: the store, with refusals bounded per actor when configured. */
function auditor(deps: AclDeps, store: AuditStore, migrator: SchemaMigrator): Auditor {
  const { config, logger, metricsRegistry } = deps;
  const recorder = new MutationAuditor(store, logger, metricsRegistry, () => migrator.ready());
  if (!config.refusalLimit) return recorder;
  return limitRefusals(recorder, { limit: config.refusalLimit, logger, metricsRegistry });
}
