import { Readable } from 'node:stream';
import type pg from 'pg';
import { inSpan } from '../observability/tracing.js';
import { auditSpan } from './audit-span.js';
import type { AuditRecord } from './audit-record.js';
import { encodeCursor } from './audit-cursor.js';
import { RECORD_COLUMNS, recordFromRow, type MacRow, type RecordRow } from './record-rows.js';

/** Which records a caller may see (docs/audit.md, "Who sees what"). */
export type AuditVisibility =
  | { scope: 'all' }
  | { scope: 'organisation'; organisationId: string; actorId: string }
  | { scope: 'own'; actorId: string };

export interface AuditFilters {
  actor?: string;
  action?: string;
  itemId?: string;
  policyId?: string;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
}

export interface AuditPage {
  records: AuditRecord[];
  /** Absent on the last page. */
  nextCursor?: string;
}

export interface TimeRange {
  from?: Date;
  to?: Date;
}

const EXPORT_BATCH = 500;

/** A WHERE clause built from parts, with numbered parameters. */
class Conditions {
  readonly parts: string[] = [];
  readonly values: unknown[] = [];

  /** `sql` receives the placeholders of `values`, in order. */
  add(sql: (...params: string[]) => string, ...values: unknown[]): this {
    const params = values.map((value) => `$${this.values.push(value)}`);
    this.parts.push(sql(...params));
    return this;
  }

  where(): string {
    return this.parts.length === 0 ? '' : `WHERE ${this.parts.join(' AND ')}`;
  }
}

/** Reads of the audit store: pages newest first, the export oldest first. */
export class AuditReader {
  constructor(readonly pool: pg.Pool) {}

  async list(
    visibility: AuditVisibility,
    filters: AuditFilters,
    page: { limit: number; before?: string },
  ): Promise<AuditPage> {
    const conditions = withTimeRange(visibleTo(filtered(new Conditions(), filters), visibility), filters);
    if (page.before !== undefined) conditions.add((p) => `id < ${p}`, page.before);
    const { rows } = await inSpan(
      () => auditSpan('SELECT'),
      () =>
        this.pool.query<RecordRow>(
          `SELECT ${RECORD_COLUMNS} FROM audit.records ${conditions.where()} ORDER BY id DESC LIMIT ${page.limit + 1}`,
          conditions.values,
        ),
    );
    const records = rows.slice(0, page.limit).map(recordFromRow);
    const last = records.at(-1);
    return rows.length > page.limit && last ? { records, nextCursor: encodeCursor(last.id) } : { records };
  }

  /** Every record of the range, oldest first, in batches (the caller's memory holds one batch). */
  async *inOrder(range: TimeRange, batchSize = EXPORT_BATCH): AsyncGenerator<AuditRecord> {
    for await (const row of this.rowsInOrder(range, batchSize)) yield recordFromRow(row);
  }

  /** As inOrder, each record with its MAC (null: stored without one). */
  async *withMacsInOrder(range: TimeRange): AsyncGenerator<{ record: AuditRecord; mac: string | null }> {
    for await (const row of this.rowsInOrder(range, EXPORT_BATCH))
      yield { record: recordFromRow(row), mac: row.mac };
  }

  private async *rowsInOrder(range: TimeRange, batchSize: number): AsyncGenerator<MacRow> {
    let after = '0';
    for (;;) {
      const conditions = withTimeRange(new Conditions(), range).add((p) => `id > ${p}`, after);
      const { rows } = await inSpan(
        () => auditSpan('SELECT'),
        () =>
          this.pool.query<MacRow>(
            `SELECT ${RECORD_COLUMNS}, mac FROM audit.records ${conditions.where()} ORDER BY id LIMIT ${batchSize}`,
            conditions.values,
          ),
      );
      yield* rows;
      const last = rows.at(-1);
      if (!last || rows.length < batchSize) return;
      after = last.id;
    }
  }

  /** The range as NDJSON: one record per line. */
  exportNdjson(range: TimeRange): Readable {
    const records = this.inOrder(range);
    return Readable.from(
      (async function* () {
        for await (const record of records) yield `${JSON.stringify(record)}\n`;
      })(),
    );
  }
}

function filtered(conditions: Conditions, filters: AuditFilters): Conditions {
  if (filters.actor !== undefined) conditions.add((p) => `actor_id = ${p}`, filters.actor);
  if (filters.action !== undefined) conditions.add((p) => `action = ${p}`, filters.action);
  if (filters.itemId !== undefined) conditions.add((p) => `target_item_id = ${p}`, filters.itemId);
  if (filters.policyId !== undefined) {
    conditions.add((p) => `target_kind = 'policy' AND target_id = ${p}`, filters.policyId);
  }
  return conditions;
}

function withTimeRange(conditions: Conditions, range: TimeRange): Conditions {
  if (range.from !== undefined) conditions.add((p) => `time >= ${p}`, range.from);
  if (range.to !== undefined) conditions.add((p) => `time < ${p}`, range.to);
  return conditions;
}

function visibleTo(conditions: Conditions, visibility: AuditVisibility): Conditions {
  if (visibility.scope === 'own') return conditions.add((p) => `actor_id = ${p}`, visibility.actorId);
  if (visibility.scope === 'organisation') {
    return conditions.add(
      (organisation, actor) => `(target_organisation_id = ${organisation} OR actor_id = ${actor})`,
      visibility.organisationId,
      visibility.actorId,
    );
  }
  return conditions;
}
