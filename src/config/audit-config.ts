import { z } from 'zod';

const postgresUrl = z
  .string()
  .regex(
    /^postgres(ql)?:\/\//,
    'a PostgreSQL connection string, postgres://user:password@host:5432/database',
  );

/**
 * The key of the records' MACs (HMAC-SHA-256): at least 32 bytes of a secret the database's owner does not hold,
 * so that a rewrite by the owner, who can recompute the SHA-256 chain, is detected (docs/audit.md).
 */
export const chainKeyVariable = z
  .string()
  .min(32, 'at least 32 characters of a random secret (e.g. openssl rand -base64 48)')
  .transform((text) => Buffer.from(text, 'utf8'))
  .optional();

export const NO_CHAIN_KEY_WARNING =
  "AUDIT_CHAIN_KEY is not set: audit records carry no MAC, and a rewrite by the database's owner is not detected";

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
  AUDIT_CHAIN_KEY: chainKeyVariable,
});

export interface AuditConfig {
  databaseUrl: string;
  migrationUrl?: string;
  migrate: boolean;
  retentionDays?: number;
  /** The key of the records' MACs; absent: records are chained by SHA-256 only. */
  chainKey?: Buffer;
}

export function auditConfig(env: z.output<typeof auditEnvironment>): AuditConfig {
  return {
    databaseUrl: env.DATABASE_URL,
    migrate: env.AUDIT_MIGRATIONS === 'startup',
    ...(env.DATABASE_MIGRATION_URL ? { migrationUrl: env.DATABASE_MIGRATION_URL } : {}),
    ...(env.AUDIT_RETENTION_DAYS ? { retentionDays: env.AUDIT_RETENTION_DAYS } : {}),
    ...(env.AUDIT_CHAIN_KEY ? { chainKey: env.AUDIT_CHAIN_KEY } : {}),
  };
}
