import type { Context } from '@opentelemetry/api';
import pg from 'pg';
import { activeContextIfTracing, inSpan, onBehalfOf } from '../observability/tracing.js';
import { auditSpan } from './audit-span.js';
import {
  GENESIS_HASH,
  recordHash,
  recordMac,
  storableEntry,
  type AuditEntry,
  type AuditRecord,
} from './audit-record.js';
import { RECORD_COLUMNS, rowValues } from './record-rows.js';

/** How a 503 and the readiness check name the audit store. */
export const POSTGRES_DEPENDENCY = 'postgres';

// Appends from every replica take this transaction-scoped lock: one writer at a time extends the chain.
const APPEND_LOCK = "hashtext('policy-grant-operator/audit/append')";

const INSERT_COLUMNS = `${RECORD_COLUMNS}, change_key, mac`;
const INSERT_COLUMN_COUNT = INSERT_COLUMNS.split(',').length;

/** One INSERT of `rows` records (placeholders $1 … for each row's values in turn). */
function insertOf(rows: number): string {
  const row = (first: number) =>
    `(${Array.from({ length: INSERT_COLUMN_COUNT }, (_, column) => `$${first + column}`).join(', ')})`;
  const values = Array.from({ length: rows }, (_, index) => row(index * INSERT_COLUMN_COUNT + 1));
  return `INSERT INTO audit.records (${INSERT_COLUMNS}) VALUES ${values.join(', ')}`;
}

/** Entries of the appends that share one transaction, at most (an append is never split). */
const MAX_GROUP_ENTRIES = 500;
/** Rows per INSERT: PostgreSQL takes at most 65,535 parameters per statement. */
const MAX_ROWS_PER_INSERT = 1_000;

const STORED_KEYS = 'SELECT change_key FROM audit.records WHERE change_key = ANY($1::text[])';

// The chain's end (the last record, or the anchor when none is kept) and PostgreSQL's clock, in one round trip.
const CHAIN_END = `
  SELECT last.id, last.hash, last.time, anchor.hash AS anchor_hash, anchor.last_pruned_id,
         date_trunc('milliseconds', clock_timestamp()) AS now
  FROM audit.chain_anchor anchor
  LEFT JOIN LATERAL (SELECT id, hash, time FROM audit.records ORDER BY id DESC LIMIT 1) last ON true`;

/**
 * The transaction's start, the append lock, and the chain's end, in one round trip: statements of one simple
 * query run one after the other, and under READ COMMITTED each takes its snapshot when it starts, so the
 * chain's end is read after the lock is held (in the lock's own statement it would be read before). The level
 * is named, not taken from the server's default: under REPEATABLE READ the snapshot would predate the lock.
 */
const BEGIN_LOCKED_AT_CHAIN_END = `BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(${APPEND_LOCK}); ${CHAIN_END}`;

interface ChainEnd {
  id: string | null;
  hash: string | null;
  time: Date | null;
  anchor_hash: string;
  last_pruned_id: string;
  now: Date;
}

interface QueuedAppend {
  entries: readonly AuditEntry[];
  /** The appender's trace context (tracing on): the transaction is its child, or linked to it when shared. */
  traceContext: Context | undefined;
  resolve(records: AuditRecord[]): void;
  reject(error: unknown): void;
}

/** An entry recorded once per change: an append skips it when a record with its key is stored. */
export interface AuditChange {
  key: string;
  entry: AuditEntry;
}

export interface AuditStoreOptions {
  connectionString: string;
  /** Connections per replica (default 10). */
  maxConnections?: number;
  /** How long a query may wait for a connection before it fails (default 5 s). */
  connectTimeoutMs?: number;
  /** The key each record's MAC is made with (AUDIT_CHAIN_KEY); absent: records are stored without one. */
  chainKey?: Buffer;
}

/**
 * How far the chain's last record may be dated after PostgreSQL's clock. A record is never dated before its
 * predecessor (a clock that stepped back is absorbed by repeating the predecessor's time), but a predecessor
 * further ahead than this would pin every later record to its time: the append is refused instead (503), and
 * the cause logged, until the clock is right.
 */
export const MAX_CLOCK_LEAD_MS = 5 * 60_000;

/** The append-only store of audit records in PostgreSQL (docs/audit.md). */
export class AuditStore {
  readonly pool: pg.Pool;
  private readonly queued: QueuedAppend[] = [];
  private appending = false;
  private readonly chainKey: Buffer | undefined;

  constructor(options: AuditStoreOptions) {
    this.chainKey = options.chainKey;
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      // A server that went away must not leave a request waiting on a dead socket.
      query_timeout: 10_000,
    });
    // An idle connection that breaks (the server restarted) is dropped; the next query opens another.
    this.pool.on('error', () => undefined);
  }

  /** Resolves when PostgreSQL answers a query. */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /**
   * Appends the entries, in order, as consecutive records of the chain, in one transaction: all are
   * stored or none. Serialized across replicas by an advisory lock held until the commit. Appends made
   * while one is in flight share the next transaction (group commit: the lock is taken once for them all),
   * and fail together: what fails a transaction is PostgreSQL's state, not an entry (storableEntry).
   */
  append(entries: readonly AuditEntry[]): Promise<AuditRecord[]> {
    if (entries.length === 0) return Promise.resolve([]);
    const appended = new Promise<AuditRecord[]>((resolve, reject) => {
      this.queued.push({ entries, traceContext: activeContextIfTracing(), resolve, reject });
    });
    if (!this.appending) void this.appendQueued();
    return appended;
  }

  private async appendQueued(): Promise<void> {
    this.appending = true;
    try {
      while (this.queued.length > 0) await this.appendGroup(this.nextGroup());
    } finally {
      this.appending = false;
    }
  }

  private nextGroup(): QueuedAppend[] {
    let entries = 0;
    const size = this.queued.findIndex((append, index) => {
      entries += append.entries.length;
      return index > 0 && entries > MAX_GROUP_ENTRIES;
    });
    return this.queued.splice(0, size === -1 ? this.queued.length : size);
  }

  private async appendGroup(group: readonly QueuedAppend[]): Promise<void> {
    try {
      const records = await onBehalfOf(
        group.map((append) => append.traceContext),
        () => this.appendChanges(group.flatMap(({ entries }) => entries.map((entry) => ({ entry })))),
      );
      let offset = 0;
      for (const append of group) {
        append.resolve(records.slice(offset, offset + append.entries.length));
        offset += append.entries.length;
      }
    } catch (error) {
      group.forEach((append) => append.reject(error));
    }
  }

  /**
   * Appends the changes whose key has no record yet, as `append` does; returns the records written (none
   * when every key was stored). The keys are read under the append lock, so the chain never skips an id.
   */
  async appendOnce(changes: readonly AuditChange[]): Promise<AuditRecord[]> {
    // Most calls find their keys stored (a controller's relist): they are answered without the lock.
    if ((await withoutStoredKeys(this.pool, changes)).length === 0) return [];
    return this.appendChanges(changes);
  }

  private appendChanges(changes: readonly { key?: string; entry: AuditEntry }[]): Promise<AuditRecord[]> {
    if (changes.length === 0) return Promise.resolve([]);
    return inSpan(
      () => auditSpan('INSERT'),
      () => this.appendInTransaction(changes),
    );
  }

  private async appendInTransaction(
    changes: readonly { key?: string; entry: AuditEntry }[],
  ): Promise<AuditRecord[]> {
    const client = await this.pool.connect();
    // A connection that breaks between two queries of the transaction fails the next query; without a
    // listener its 'error' event would be an uncaught exception.
    const ignore = () => undefined;
    client.on('error', ignore);
    let broken = false;
    try {
      // A query of several statements answers with one result each (pg's types know only one).
      const results = (await client.query(BEGIN_LOCKED_AT_CHAIN_END)) as unknown as pg.QueryResult[];
      const end = results.at(-1)?.rows[0] as ChainEnd;
      const fresh = await withoutStoredKeys(client, changes);
      const records = chainOn(
        end,
        fresh.map((change) => storableEntry(change.entry)),
      );
      const key = this.chainKey;
      for (let start = 0; start < records.length; start += MAX_ROWS_PER_INSERT) {
        const rows = records.slice(start, start + MAX_ROWS_PER_INSERT);
        const values = rows.flatMap((record, index) => [
          ...rowValues(record),
          fresh[start + index]?.key ?? null,
          key ? recordMac(key, record.hash) : null,
        ]);
        await client.query(insertOf(rows.length), values);
      }
      await client.query('COMMIT');
      return records;
    } catch (error) {
      broken = await client.query('ROLLBACK').then(
        () => false,
        () => true,
      );
      throw error;
    } finally {
      client.off('error', ignore);
      client.release(broken);
    }
  }

  /** Deletes the records past the retention the owner configured (audit.prune()); returns how many. */
  async prune(): Promise<number> {
    const { rows } = await inSpan(
      () => auditSpan('SELECT', 'audit.prune'),
      () => this.pool.query<{ deleted: string }>('SELECT audit.prune() AS deleted'),
    );
    return Number(rows[0]?.deleted ?? 0);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** The records that extend the chain at `end`: consecutive ids, times that never go back, linked hashes. */
function chainOn(end: ChainEnd, entries: readonly AuditEntry[]): AuditRecord[] {
  let id = BigInt(end.id ?? end.last_pruned_id);
  let prevHash = end.hash ?? end.anchor_hash ?? GENESIS_HASH;
  const time = new Date(appendTime(end.now, end.time)).toISOString();
  return entries.map((entry) => {
    id += 1n;
    const { actor, action, target, outcome, requestId } = entry;
    const unsigned = { id: id.toString(), time, actor, action, target, outcome, requestId, prevHash };
    const record = { ...unsigned, hash: recordHash(unsigned) };
    prevHash = record.hash;
    return record;
  });
}

/** PostgreSQL's clock, or the predecessor's time when the clock is behind it by at most MAX_CLOCK_LEAD_MS. */
export function appendTime(now: Date, previous: Date | null): number {
  const lead = (previous?.getTime() ?? 0) - now.getTime();
  if (lead > MAX_CLOCK_LEAD_MS) {
    throw new Error(
      `the audit chain's last record is dated ${previous?.toISOString()}, ${Math.round(lead / 1000)} s after ` +
        `PostgreSQL's clock (${now.toISOString()}): refusing to date new records after it; correct the clock`,
    );
  }
  return Math.max(now.getTime(), previous?.getTime() ?? 0);
}

/** The changes whose key no stored record has (unkeyed entries are always kept). */
async function withoutStoredKeys<T extends { key?: string }>(
  client: pg.Pool | pg.PoolClient,
  changes: readonly T[],
): Promise<T[]> {
  const keys = changes.flatMap((change) => (change.key === undefined ? [] : [change.key]));
  if (keys.length === 0) return [...changes];
  const { rows } = await client.query<{ change_key: string }>(STORED_KEYS, [keys]);
  const stored = new Set(rows.map((row) => row.change_key));
  return changes.filter((change) => change.key === undefined || !stored.has(change.key));
}
