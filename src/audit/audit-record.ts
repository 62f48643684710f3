import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

// The audit record (docs/audit.md, "The record") and its place in the hash chain.

export type ActorType = 'user' | 'application' | 'kubernetes';

export interface AuditActor {
  type: ActorType;
  id: string;
}

export interface AuditTarget {
  kind: string;
  id: string;
  itemId?: string;
  /** The organisation the target belongs to (an item's, a membership's): what an org_admin may see. */
  organisationId?: string;
}

export interface AuditOutcome {
  /** The HTTP status the action answered. */
  status: number;
  detail?: string;
}

/** What a caller records: the store adds id, time and the chain. */
export interface AuditEntry {
  actor: AuditActor;
  action: string;
  target: AuditTarget;
  outcome: AuditOutcome;
  requestId: string;
}

export interface AuditRecord extends AuditEntry {
  /** Decimal: ids are consecutive from the first record, so a gap shows a deleted record. */
  id: string;
  /** ISO 8601 with milliseconds, from PostgreSQL's clock; never earlier than the previous record's. */
  time: string;
  prevHash: string;
  hash: string;
}

/**
 * The entry as PostgreSQL can store it: its text and jsonb types cannot hold U+0000, which a refused request's
 * raw input may carry (a path parameter `%00`); each becomes U+FFFD, so the record is kept, not lost.
 */
export function storableEntry(entry: AuditEntry): AuditEntry {
  return withoutNul(entry) as AuditEntry;
}

function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\ufffd');
  if (Array.isArray(value)) return value.map(withoutNul);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, withoutNul(field)]));
  }
  return value;
}

/** The prevHash of the first record ever written. */
export const GENESIS_HASH = '0'.repeat(64);

/** SHA-256 (hex) over the canonical encoding of everything in the record but its own hash. */
export function recordHash(record: Omit<AuditRecord, 'hash'>): string {
  return createHash('sha256').update(canonicalJson(record)).digest('hex');
}

/**
 * HMAC-SHA-256 (hex) of a record's hash under the chain key, which the database does not hold: the hash covers
 * the record's content and its predecessor's hash, so whoever can rewrite the table (its owner) and recompute
 * SHA-256 still cannot produce the MAC of a rewritten record.
 */
export function recordMac(key: Buffer, hash: string): string {
  return createHmac('sha256', key).update(hash).digest('hex');
}

/** Whether `mac` is the MAC of `hash` under `key` (compared in constant time). */
export function macMatches(key: Buffer, hash: string, mac: string): boolean {
  const expected = Buffer.from(recordMac(key, hash), 'hex');
  const given = Buffer.from(mac, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** JSON with object keys sorted at every level and absent optional fields left out: one text per record. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, field]) => `${JSON.stringify(key)}:${canonicalJson(field)}`);
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value);
}
