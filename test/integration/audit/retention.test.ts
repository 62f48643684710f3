import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH, recordHash, type AuditRecord } from '../../../src/audit/audit-record.js';
import { AuditReader } from '../../../src/audit/audit-reader.js';
import { AuditStore } from '../../../src/audit/audit-store.js';
import { verifyChain } from '../../../src/audit/chain-verifier.js';
import { migrate } from '../../../src/audit/migrations.js';
import { RECORD_COLUMNS, rowValues } from '../../../src/audit/record-rows.js';
import { testDatabase } from '../support/database.js';
import { numberedEntry as entry } from './support/entries.js';

// Retention on a real PostgreSQL: audit.prune() deletes only past the owner's setting, oldest first, and the
// chain of what is kept still verifies from the anchor; migrations run twice change nothing.

let store: AuditStore;
let reader: AuditReader;

/** Records written 40 days ago, chained from genesis, as a replica would have then. */
async function oldRecords(count: number): Promise<AuditRecord[]> {
  const time = new Date(Date.now() - 40 * 86_400_000).toISOString();
  let prevHash = GENESIS_HASH;
  const records: AuditRecord[] = [];
  for (let n = 1; n <= count; n++) {
    const unsigned = { id: String(n), time, ...entry(n), prevHash };
    const record = { ...unsigned, hash: recordHash(unsigned) };
    records.push(record);
    prevHash = record.hash;
  }
  const placeholders = RECORD_COLUMNS.split(',').map((_, index) => `$${index + 1}`);
  for (const record of records) {
    await store.pool.query(
      `INSERT INTO audit.records (${RECORD_COLUMNS}) VALUES (${placeholders.join(',')})`,
      rowValues(record),
    );
  }
  return records;
}

beforeAll(async () => {
  const database = await testDatabase('retention');
  store = new AuditStore({ connectionString: database.url });
  reader = new AuditReader(store.pool);
  expect(await migrate(store.pool, { retentionDays: 30 })).toEqual([1, 2, 3]);
  expect(await migrate(store.pool, { retentionDays: 30 }), 'a second run applies nothing').toEqual([]);
});

afterAll(() => store.close());

describe('retention', () => {
  it('prunes the records past the retention, and the rest verifies from the anchor', async () => {
    const old = await oldRecords(3);
    const recent = await store.append([entry(4), entry(5)]);
    expect(recent.map((record) => record.id)).toEqual(['4', '5']);
    expect(recent[0]?.prevHash, 'the chain goes on from the old records').toBe(old[2]?.hash);

    expect(await store.prune()).toBe(3);
    expect(await store.prune(), 'nothing more is past the retention').toBe(0);
    const { rows } = await store.pool.query<{ hash: string; last_pruned_id: string }>(
      'SELECT hash, last_pruned_id FROM audit.chain_anchor',
    );
    expect(rows[0]).toEqual({ hash: old[2]?.hash, last_pruned_id: '3' });
    expect(await verifyChain(reader, {})).toMatchObject({
      valid: true,
      checked: 2,
      firstId: '4',
      breaks: [],
    });

    await store.pool.query("DELETE FROM audit.records WHERE id = '4'");
    expect((await verifyChain(reader, {})).breaks).toEqual([
      expect.objectContaining({ id: '5', reason: 'missing' }),
    ]);
  });

  it('keeps everything when no retention is set', async () => {
    await migrate(store.pool, {});
    const [latest] = await store.append([entry(6)]);
    await store.pool.query("UPDATE audit.records SET time = now() - interval '400 days' WHERE id = $1", [
      latest?.id,
    ]);
    expect(await store.prune()).toBe(0);
    const { rows } = await store.pool.query<{ count: string }>('SELECT count(*) FROM audit.records');
    expect(Number(rows[0]?.count)).toBe(2);
  });
});
