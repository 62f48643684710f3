import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../src/audit/audit-record.js';
import { AuditReader } from '../../../src/audit/audit-reader.js';
import { AuditStore } from '../../../src/audit/audit-store.js';
import { verifyChain } from '../../../src/audit/chain-verifier.js';
import { migrate } from '../../../src/audit/migrations.js';
import { testDatabase } from '../support/database.js';

// Appends made at once on a real PostgreSQL share transactions (group commit): each caller gets its own
// records, in its order, the chain verifies, and a transaction that fails fails the appends it carried only.

let database: Awaited<ReturnType<typeof testDatabase>>;
let store: AuditStore;
let reader: AuditReader;
let transactions = 0;

const entry = (request: number, n: number): AuditEntry => ({
  actor: { type: 'user', id: `u${request}` },
  action: 'policy.created',
  target: { kind: 'policy', id: `p${request}-${n}` },
  outcome: { status: 201 },
  requestId: `r${request}`,
});

beforeAll(async () => {
  database = await testDatabase('group-commit');
  store = new AuditStore({ connectionString: database.url });
  reader = new AuditReader(store.pool);
  await migrate(store.pool, {});
  // Each append transaction takes a connection of its own (queries do too, but none run during the appends).
  const connect = store.pool.connect.bind(store.pool) as (...args: unknown[]) => unknown;
  store.pool.connect = ((...args: unknown[]) => {
    transactions += 1;
    return connect(...args);
  }) as typeof store.pool.connect;
});

afterAll(() => store.close());

describe('appends made at once', () => {
  it('share transactions, each caller getting its own records in order, and the chain verifies', async () => {
    const before = transactions;
    const requests = Array.from({ length: 20 }, (_, request) => [entry(request, 1), entry(request, 2)]);
    const appended = await Promise.all(requests.map((entries) => store.append(entries)));

    expect(transactions - before).toBeLessThan(requests.length);
    for (const [request, records] of appended.entries()) {
      expect(records.map((record) => record.target.id)).toEqual([`p${request}-1`, `p${request}-2`]);
      expect(Number(records[1]?.id)).toBe(Number(records[0]?.id) + 1);
      expect(records[1]?.prevHash).toBe(records[0]?.hash);
    }
    const ids = appended.flat().map((record) => Number(record.id));
    expect(new Set(ids).size).toBe(40);
    expect(await verifyChain(reader, {})).toMatchObject({ valid: true, checked: 40, breaks: [] });
  });

  it('fails together when their transaction fails, and the next appends are stored', async () => {
    await store.pool.query('ALTER TABLE audit.records ADD CONSTRAINT refuse_all CHECK (false) NOT VALID');
    const refused = Array.from({ length: 5 }, (_, request) => store.append([entry(100 + request, 1)]));
    for (const append of refused) await expect(append).rejects.toThrow(/refuse_all/);
    await store.pool.query('ALTER TABLE audit.records DROP CONSTRAINT refuse_all');

    const [stored] = await store.append([entry(200, 1)]);
    expect(stored?.target.id).toBe('p200-1');
    expect(await verifyChain(reader, {})).toMatchObject({ valid: true, checked: 41, breaks: [] });
  });

  it('from two replicas at once, extend one chain without a gap or a repeated id', async () => {
    const other = new AuditStore({ connectionString: database.url });
    // Each replica appends one request after the other, so that their transactions overlap all along.
    const appendInTurn = async (replica: AuditStore, first: number) => {
      const ids: number[] = [];
      for (let request = first; request < first + 40; request++) {
        const records = await replica.append([entry(request, 1), entry(request, 2)]);
        ids.push(...records.map((record) => Number(record.id)));
      }
      return ids;
    };
    try {
      const ids = (await Promise.all([appendInTurn(store, 300), appendInTurn(other, 400)])).flat();
      expect(new Set(ids).size).toBe(160);
      expect(Math.max(...ids) - Math.min(...ids)).toBe(159);
      expect(await verifyChain(reader, {})).toMatchObject({ valid: true, checked: 201, breaks: [] });
    } finally {
      await other.close();
    }
  });
});
