import { z } from 'zod';

const postgresUrl = z
  .string()
  .regex(
    /^postgres(ql)?:\/\//,
    'a PostgreSQL connection string, postgres://user:password@host:5432/database',
  );

/** The audit store's variables (docs/audit.md, "Configuration"). */
export const auditEnvironment = z.object({
  /** The services' connection: a role that may only INSERT and SELECT the audit records. */
  DATABASE_URL: postgresUrl,
  /** The owner's connection for the migrations; DATABASE_URL when unset. */
  DATABASE_MIGRATION_URL: postgresUrl.optional(),
  /** `startup`: this process runs the missing migrations; `skip`: a Job (or a DBA) runs them. */
  AUDIT_MIGRATIONS: z.enum(['startup', 'skip']).default('startup'),
  /** Records older than this many days are deleted (hourly); unset keeps them for ever. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).optional(),
});

export interface AuditConfig {
  databaseUrl: string;
  migrationUrl?: string;
  migrate: boolean;
  retentionDays?: number;
}

export function auditConfig(env: z.output<typeof auditEnvironment>): AuditConfig {
  return {
    databaseUrl: env.DATABASE_URL,
    migrate: env.AUDIT_MIGRATIONS === 'startup',
    ...(env.DATABASE_MIGRATION_URL ? { migrationUrl: env.DATABASE_MIGRATION_URL } : {}),
    ...(env.AUDIT_RETENTION_DAYS ? { retentionDays: env.AUDIT_RETENTION_DAYS } : {}),
  };
}
