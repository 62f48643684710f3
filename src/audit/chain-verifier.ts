import type pg from 'pg';
import { recordHash, type AuditRecord } from './audit-record.js';
import type { AuditReader, TimeRange } from './audit-reader.js';

export type BreakReason = 'altered' | 'missing' | 'unlinked';

export interface ChainBreak {
  /** The record at which the chain stops holding. */
  id: string;
  reason: BreakReason;
  detail: string;
}

export interface ChainReport {
  valid: boolean;
  checked: number;
  firstId?: string;
  lastId?: string;
  /** At most MAX_REPORTED_BREAKS, oldest first. */
  breaks: ChainBreak[];
}

/** A chain link: the id and hash a record's successor must follow. */
export interface Link {
  id: string;
  hash: string;
}

export const MAX_REPORTED_BREAKS = 100;

/**
 * What is wrong with `record` as the successor of `previous`: its content no longer matches its hash (edited),
 * ids skip (records deleted), or its prevHash is not the previous hash (the previous record was rewritten
 * with a hash of its own).
 */
export function linkBreaks(previous: Link, record: AuditRecord): ChainBreak[] {
  const breaks: ChainBreak[] = [];
  const { hash, ...content } = record;
  if (recordHash(content) !== hash) {
    breaks.push({ id: record.id, reason: 'altered', detail: `record ${record.id} does not match its hash` });
  }
  const expectedId = BigInt(previous.id) + 1n;
  if (BigInt(record.id) !== expectedId) {
    const missing = `${expectedId}${BigInt(record.id) - 1n > expectedId ? `..${BigInt(record.id) - 1n}` : ''}`;
    breaks.push({
      id: record.id,
      reason: 'missing',
      detail: `record(s) ${missing} before ${record.id} are missing`,
    });
  } else if (record.prevHash !== previous.hash) {
    breaks.push({
      id: record.id,
      reason: 'unlinked',
      detail: `record ${record.id}'s prevHash is not the hash of record ${previous.id}`,
    });
  }
  return breaks;
}

/**
 * Checks the records of the range oldest first, from the link before the first of them: the record before it,
 * or the chain's anchor (genesis, or the last record retention pruned) when there is none.
 */
export async function verifyChain(reader: AuditReader, range: TimeRange): Promise<ChainReport> {
  const report: ChainReport = { valid: true, checked: 0, breaks: [] };
  let previous: Link | undefined;
  for await (const record of reader.inOrder(range)) {
    previous ??= await linkBefore(reader.pool, record.id);
    report.firstId ??= record.id;
    report.lastId = record.id;
    report.checked += 1;
    const breaks = linkBreaks(previous, record);
    if (breaks.length > 0) report.valid = false;
    report.breaks.push(...breaks.slice(0, MAX_REPORTED_BREAKS - report.breaks.length));
    previous = { id: record.id, hash: record.hash };
  }
  return report;
}

async function linkBefore(pool: pg.Pool, id: string): Promise<Link> {
  const { rows } = await pool.query<Link>(
    `SELECT id, hash FROM (SELECT id, hash FROM audit.records WHERE id < $1 ORDER BY id DESC LIMIT 1) last
     UNION ALL SELECT last_pruned_id AS id, hash FROM audit.chain_anchor
     ORDER BY id DESC LIMIT 1`,
    [id],
  );
  return { id: String(rows[0]?.id ?? '0'), hash: rows[0]?.hash ?? '' };
}
