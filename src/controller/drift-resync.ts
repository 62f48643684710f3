import type { Logger } from '../observability/logger.js';
import type { RelationshipUpdate } from '../spicedb/client.js';
import { chunk, DEFAULT_MAX_UPDATES_PER_WRITE } from '../spicedb/client.js';
import type { GrantMetrics } from './controller-metrics.js';
import type { KeyedMutex } from './keyed-mutex.js';
import type { ManagedRelation } from './managed-relations.js';
import type { TupleAccounting, ResyncedKind } from './projected/projected-kind.js';
import type { RelationshipStore } from './relationship-store.js';
import { objectOfTupleKey, parseTupleKey, tupleKey, type TupleKey } from '../verdict/tuple-key.js';

export interface DriftResyncOptions {
  store: RelationshipStore;
  /** Every kind that owns its relations: grants, CatalogItems' owners, Memberships, Delegations. */
  kinds: ResyncedKind[];
  mutex: KeyedMutex;
  metrics: GrantMetrics;
  logger: Logger;
  /** Told about the orphans it deleted, as the Projector's option of the same name. */
  onTuplesDeleted(keys: TupleKey[]): void;
  /** Relationships per ReadRelationships page and per WriteRelationships call; default SpiceDB's limit, 1000. */
  batchSize?: number;
  now?: () => Date;
}

export interface ResyncReport {
  /** Relationships read from SpiceDB. */
  examined: number;
  /** Relationships the custom resources want. */
  desired: number;
  missing: number;
  orphan: number;
  durationMs: number;
}

export class ResyncCancelledError extends Error {
  override readonly name = 'ResyncCancelledError';
}

/**
 * The periodic full comparison of SpiceDB with the custom resources (the invariant of docs/architecture.md:
 * the grant tuples in SpiceDB are exactly the projection of the active, unexpired, authorised grants; owner
 * tuples, of the CatalogItems; membership tuples, of the Memberships). It reads the managed relations page
 * by page, projecting the objects while each page is on its way, and writes in batches, so no request holds more
 * than one page or batch of relationships; what SpiceDB holds and what the resources want are kept as keys and
 * expirations only.
 *
 * Every repair is decided again, under the lock of the objects it touches, from the caches as they are at
 * that moment: a tuple a grant wrote (or withdrew) while the resync was reading is left alone.
 */
export class DriftResync {
  private readonly batchSize: number;
  private readonly now: () => Date;
  /** `<type>#<relation>` → the kind that is its only writer. */
  private readonly kindOfRelation = new Map<string, ResyncedKind>();

  constructor(private readonly options: DriftResyncOptions) {
    this.batchSize = options.batchSize ?? DEFAULT_MAX_UPDATES_PER_WRITE;
    this.now = options.now ?? (() => new Date());
    for (const kind of options.kinds) {
      for (const { objectType, relation } of kind.relations) {
        this.kindOfRelation.set(`${objectType}#${relation}`, kind);
      }
    }
  }

  async run(isCancelled: () => boolean = () => false): Promise<ResyncReport> {
    const started = performance.now();
    // A SpiceDB that restarted empty has no schema until a leader writes it, and reads of a relation it lacks
    // fail: a new term's first resync may come before any write of the term has set fence and schema.
    await this.options.store.ensureSchema();
    const wanted = new Map<TupleKey, number | undefined>();
    const projecting = this.projectWanted(wanted);
    const present = new Map<TupleKey, number | undefined>();
    for (const relation of this.options.kinds.flatMap((kind) => kind.relations)) {
      await this.readInto(present, relation, () => projecting.next(), isCancelled);
    }
    while (!projecting.next().done);
    const desired = wanted.size;
    const orphans: TupleKey[] = [];
    const misdated: TupleKey[] = [];
    for (const [key, expiresAt] of present) {
      if (!wanted.has(key)) orphans.push(key);
      else if (wanted.get(key) !== expiresAt) misdated.push(key);
      wanted.delete(key);
    }
    const orphan = await this.deleteOrphans(orphans, isCancelled);
    const missing = await this.writeMissing([...wanted.keys(), ...misdated], isCancelled);
    const report = {
      examined: present.size,
      desired,
      missing,
      orphan,
      durationMs: Math.round(performance.now() - started),
    };
    this.options.metrics.resyncCompleted(report.durationMs / 1000);
    this.options.logger[missing + orphan > 0 ? 'warn' : 'info'](report, 'resync done');
    return report;
  }

  /**
   * Reads one relation page by page into `present` (tuple key → expiration), asking for each page before it
   * takes in the one before, and calling `meanwhile` while a page is on its way: the projection runs then,
   * instead of before the reads.
   */
  private async readInto(
    present: Map<TupleKey, number | undefined>,
    { objectType, relation }: ManagedRelation,
    meanwhile: () => void,
    isCancelled: () => boolean,
  ): Promise<void> {
    const pages = this.options.store.readRelationships(
      { resourceType: objectType, relation },
      { pageSize: this.batchSize, consistency: { fullyConsistent: true } },
    );
    try {
      for (let next = pages.next(); ;) {
        meanwhile();
        const page = await next;
        if (page.done) return;
        if (isCancelled()) throw new ResyncCancelledError('resync cancelled');
        next = pages.next();
        for (const relationship of page.value.relationships) {
          present.set(tupleKey(relationship), relationship.expiresAt?.getTime());
        }
      }
    } finally {
      await pages.return(undefined);
    }
  }

  /**
   * Fills `wanted` with the tuple key → expiration (ms, or undefined for none) of every relationship the kinds
   * want now, pausing after every page's worth of objects (the caller goes on while SpiceDB reads).
   */
  private *projectWanted(wanted: Map<TupleKey, number | undefined>): Generator<void> {
    const now = this.now();
    let objectsProjected = 0;
    for (const kind of this.options.kinds) {
      for (const relationships of kind.wanted(now)) {
        for (const relationship of relationships) {
          wanted.set(tupleKey(relationship), relationship.expiresAt?.getTime());
        }
        objectsProjected += 1;
        if (objectsProjected % this.batchSize === 0) yield;
      }
    }
  }

  private async deleteOrphans(keys: TupleKey[], isCancelled: () => boolean): Promise<number> {
    let deleted = 0;
    for (const batch of chunk(keys, this.batchSize)) {
      const removed = await this.repair(batch, isCancelled, (key, accounting) =>
        accounting?.accountFor(key) ? undefined : { operation: 'delete', relationship: parseTupleKey(key) },
      );
      this.options.metrics.driftRepaired('orphan', removed.length);
      this.options.onTuplesDeleted(removed);
      deleted += removed.length;
    }
    return deleted;
  }

  private async writeMissing(keys: TupleKey[], isCancelled: () => boolean): Promise<number> {
    let written = 0;
    for (const batch of chunk(keys, this.batchSize)) {
      const repaired = await this.repair(batch, isCancelled, (key, accounting) => {
        const writable = accounting?.accountForWritable(key);
        return writable ? { operation: 'touch', relationship: writable } : undefined;
      });
      this.options.metrics.driftRepaired('missing', repaired.length);
      written += repaired.length;
    }
    return written;
  }

  /**
   * Under the batch's locks, decides each tuple again from the caches, asking the kind that writes its relation,
   * and writes the updates in one call. A cancelled run (leadership lost, stopping) writes no further batch: that
   * is checked right before each.
   */
  private async repair(
    batch: TupleKey[],
    isCancelled: () => boolean,
    decide: (key: TupleKey, accounting: TupleAccounting | undefined) => RelationshipUpdate | undefined,
  ): Promise<TupleKey[]> {
    const { mutex, store } = this.options;
    return mutex.withLock(batch.map(objectOfTupleKey), async () => {
      if (isCancelled()) throw new ResyncCancelledError('resync cancelled');
      const now = this.now();
      const accountings = new Map<ResyncedKind, TupleAccounting>();
      const accountingOf = (key: TupleKey) => {
        const { resource, relation } = parseTupleKey(key);
        const kind = this.kindOfRelation.get(`${resource.type}#${relation}`);
        if (kind && !accountings.has(kind)) accountings.set(kind, kind.accounting(now));
        return kind && accountings.get(kind);
      };
      const updates = batch.flatMap((key) => decide(key, accountingOf(key)) ?? []);
      if (updates.length > 0) await store.writeRelationshipsInBatches(updates);
      return updates.map((update) => tupleKey(update.relationship));
    });
  }
}
