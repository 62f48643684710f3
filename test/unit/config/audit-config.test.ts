import { describe, expect, it } from 'vitest';
import { auditConfig, auditEnvironment } from '../../../src/config/audit-config.js';

const URL = 'postgres://acl_api:secret@db:5432/audit';
const KEY = 'k'.repeat(32);

describe('the audit store’s configuration', () => {
  it('migrates at start-up by default, with the services’ own connection', () => {
    expect(auditConfig(auditEnvironment.parse({ DATABASE_URL: URL }))).toEqual({
      databaseUrl: URL,
      migrate: true,
    });
  });

  it('takes the owner’s connection, a retention and the chain key, and can leave migrations to a Job', () => {
    const config = auditConfig(
      auditEnvironment.parse({
        DATABASE_URL: URL,
        DATABASE_MIGRATION_URL: 'postgresql://owner:secret@db:5432/audit',
        AUDIT_MIGRATIONS: 'skip',
        AUDIT_RETENTION_DAYS: '30',
        AUDIT_CHAIN_KEY: KEY,
      }),
    );
    expect(config).toEqual({
      databaseUrl: URL,
      migrationUrl: 'postgresql://owner:secret@db:5432/audit',
      migrate: false,
      retentionDays: 30,
      chainKey: Buffer.from(KEY),
    });
  });

  it('refuses a short chain key and a connection string that is not PostgreSQL’s, naming the variable', () => {
    const short = auditEnvironment.safeParse({ DATABASE_URL: URL, AUDIT_CHAIN_KEY: 'short' });
    expect(short.error?.issues.map((issue) => issue.path)).toEqual([['AUDIT_CHAIN_KEY']]);
    const mysql = auditEnvironment.safeParse({ DATABASE_URL: 'mysql://db/audit' });
    expect(mysql.error?.issues.map((issue) => issue.path)).toEqual([['DATABASE_URL']]);
  });
});
