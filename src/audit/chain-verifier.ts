import type pg from 'pg';
import { macMatches, recordHash, type AuditRecord } from './audit-record.js';
import type { AuditReader, TimeRange } from './audit-reader.js';

export const BREAK_REASONS = ['altered', 'missing', 'unlinked', 'forged', 'unkeyed', 'time'] as const;
export type BreakReason = (typeof BREAK_REASONS)[number];

export interface ChainBreak {
  /** The record at which the chain stops holding. */
  id: string;
  reason: BreakReason;
  detail: string;
}

export interface ChainReport {
  valid: boolean;
  checked: number;
  /** Whether each record's MAC was checked against the chain key (a key is configured). */
  keyed: boolean;
  firstId?: string;
  lastId?: string;
  /** At most MAX_REPORTED_BREAKS, oldest first. */
  breaks: ChainBreak[];
}

/** A chain link: the id, hash and time a record's successor must follow. */
export interface Link {
  id: string;
  hash: string;
  /** Absent for the anchor. */
  time?: string;
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
  if (previous.time !== undefined && Date.parse(record.time) < Date.parse(previous.time)) {
    breaks.push({
      id: record.id,
      reason: 'time',
      detail: `record ${record.id} is dated ${record.time}, before record ${previous.id} (${previous.time})`,
    });
  }
  return breaks;
}

/**
 * What is wrong with the record's MAC under the chain key: absent (written without the key, or removed), or
 * not the MAC of its hash (rewritten by someone who could recompute SHA-256 but does not hold the key).
 */
export function macBreaks(key: Buffer, record: AuditRecord, mac: string | null): ChainBreak[] {
  if (mac === null) {
    return [
      { id: record.id, reason: 'unkeyed', detail: `record ${record.id} has no MAC under the chain key` },
    ];
  }
  if (macMatches(key, record.hash, mac)) return [];
  return [
    {
      id: record.id,
      reason: 'forged',
      detail: `record ${record.id}'s MAC does not match its hash: it was written without the chain key`,
    },
  ];
}

/**
 * Checks the records of the range oldest first, from the link before the first of them: the record before it,
 * or the chain's anchor (genesis, or the last record retention pruned) when there is none. With the chain key,
 * every record's MAC is checked too.
 */
export async function verifyChain(reader: AuditReader, range: TimeRange, key?: Buffer): Promise<ChainReport> {
  const report: ChainReport = { valid: true, checked: 0, keyed: key !== undefined, breaks: [] };
  let previous: Link | undefined;
  for await (const { record, mac } of reader.withMacsInOrder(range)) {
    previous ??= await linkBefore(reader.pool, record.id);
    report.firstId ??= record.id;
    report.lastId = record.id;
    report.checked += 1;
    const breaks = [...linkBreaks(previous, record), ...(key ? macBreaks(key, record, mac) : [])];
    if (breaks.length > 0) report.valid = false;
    report.breaks.push(...breaks.slice(0, MAX_REPORTED_BREAKS - report.breaks.length));
    previous = { id: record.id, hash: record.hash, time: record.time };
  }
  return report;
}

async function linkBefore(pool: pg.Pool, id: string): Promise<Link> {
  const { rows } = await pool.query<{ id: string; hash: string; time: Date | null }>(
    `SELECT id, hash, time FROM (SELECT id, hash, time FROM audit.records WHERE id < $1 ORDER BY id DESC LIMIT 1) last
     UNION ALL SELECT last_pruned_id AS id, hash, NULL AS time FROM audit.chain_anchor
     ORDER BY id DESC LIMIT 1`,
    [id],
  );
  const row = rows[0];
  return {
    id: String(row?.id ?? '0'),
    hash: row?.hash ?? '',
    ...(row?.time ? { time: row.time.toISOString() } : {}),
  };
}
