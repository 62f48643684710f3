import type { ActorType, AuditRecord } from './audit-record.js';

/** A row of audit.records as node-postgres returns it (bigint as text, timestamptz as Date). */
export interface RecordRow {
  id: string;
  time: Date;
  actor_type: string;
  actor_id: string;
  action: string;
  target_kind: string;
  target_id: string;
  target_item_id: string | null;
  target_organisation_id: string | null;
  outcome_status: number;
  outcome_detail: string | null;
  request_id: string;
  prev_hash: string;
  hash: string;
}

/** A row with its MAC (HMAC-SHA-256 of the hash under the chain key; null: written without a key). */
export interface MacRow extends RecordRow {
  mac: string | null;
}

export const RECORD_COLUMNS =
  'id, time, actor_type, actor_id, action, target_kind, target_id, target_item_id, target_organisation_id, ' +
  'outcome_status, outcome_detail, request_id, prev_hash, hash';

export function recordFromRow(row: RecordRow): AuditRecord {
  return {
    id: row.id,
    time: row.time.toISOString(),
    actor: { type: row.actor_type as ActorType, id: row.actor_id },
    action: row.action,
    target: {
      kind: row.target_kind,
      id: row.target_id,
      ...(row.target_item_id === null ? {} : { itemId: row.target_item_id }),
      ...(row.target_organisation_id === null ? {} : { organisationId: row.target_organisation_id }),
    },
    outcome: {
      status: row.outcome_status,
      ...(row.outcome_detail === null ? {} : { detail: row.outcome_detail }),
    },
    requestId: row.request_id,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/** The values of `RECORD_COLUMNS`, in order, for an INSERT. */
export function rowValues(record: AuditRecord): unknown[] {
  return [
    record.id,
    record.time,
    record.actor.type,
    record.actor.id,
    record.action,
    record.target.kind,
    record.target.id,
    record.target.itemId ?? null,
    record.target.organisationId ?? null,
    record.outcome.status,
    record.outcome.detail ?? null,
    record.requestId,
    record.prevHash,
    record.hash,
  ];
}
