import pg from 'pg';
import { recordFromRow, RECORD_COLUMNS, type RecordRow } from '../../../../src/audit/record-rows.js';
import type { AuditRecord } from '../../../../src/audit/audit-record.js';
import type { AclHarness } from './acl-harness.js';

/** Reads and writes the harness's audit database directly, as its owner (a DBA, or an attacker with access). */
export class AuditDatabase {
  constructor(private readonly harness: AclHarness) {}

  async query<R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<R[]> {
    const url = this.harness.audit?.databaseUrl;
    if (!url) throw new Error('the harness has no audit database');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(sql, values)).rows;
    } finally {
      await client.end();
    }
  }

  /** The records of one request, oldest first. */
  async ofRequest(requestId: string): Promise<AuditRecord[]> {
    const rows = await this.query<RecordRow>(
      `SELECT ${RECORD_COLUMNS} FROM audit.records WHERE request_id = $1 ORDER BY id`,
      [requestId],
    );
    return rows.map(recordFromRow);
  }
}
