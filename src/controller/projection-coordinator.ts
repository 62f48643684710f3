import type { TupleKey } from '../verdict/tuple-key.js';

/**
 * What one kind tells the coordinator about the record of its last writes. That record lets a reconcile skip a
 * write that would change nothing; the coordinator decides when it may no longer be believed.
 */
export interface ProjectionRecords {
  /** The keys of this kind's objects whose projection includes `key`. */
  keysProjecting(key: TupleKey): string[];
  /** Drops what this process recorded as last written for one object. */
  forget(key: string): void;
  /** Drops every record of the kind. */
  forgetAll(): void;
}

/** The work queue of the kind's controller. */
export interface ReconcileQueue {
  enqueue(key: string): void;
}

interface KindEntry {
  records?: ProjectionRecords;
  queue?: ReconcileQueue;
  /** The objects to reconcile again after SpiceDB recovered; none when absent. */
  rewrite?: () => string[];
}

/**
 * The one owner of the forget/recheck coordination between the projecting kinds (grants, memberships,
 * delegations, catalog items). Objects of different kinds, or of one kind, can share a tuple (a group's
 * ownership, an agent's ownership, a tuple two grants project). When one of them deletes a shared tuple, the
 * others that still project it must write it again, so their record of the last write is dropped and they are
 * reconciled. When SpiceDB may have changed behind this process (a new term of leadership, an outage, a lost
 * schema), no record can be believed.
 *
 * Kinds register their records when their projector is built and bind their controller's queue once it
 * exists; the manager starts no reconcile before every setup has run, so no recheck is lost in between.
 */
export class ProjectionCoordinator {
  private readonly kinds = new Map<string, KindEntry>();

  /** Registers the records of `kind`: its projector tells `recheck` about the tuples it deleted. */
  track(kind: string, records: ProjectionRecords): void {
    this.entry(kind).records = records;
  }

  /**
   * Binds the queue of the controller that reconciles `kind`. `rewrite` lists the objects to reconcile again
   * once SpiceDB recovered from an outage or a lost schema.
   */
  bind(kind: string, queue: ReconcileQueue, rewrite?: () => string[]): void {
    const entry = this.entry(kind);
    entry.queue = queue;
    if (rewrite) entry.rewrite = rewrite;
  }

  /**
   * Objects of `kind` that project one of `keys` (a tuple another object shared and deleted) forget their last
   * write and reconcile again, all but `exceptKey`: they check SpiceDB again rather than trust this process.
   */
  recheck(kind: string, keys: TupleKey[], exceptKey?: string): void {
    const { records, queue } = this.entry(kind);
    if (!records) return;
    for (const key of keys) {
      for (const objectKey of records.keysProjecting(key)) {
        if (objectKey === exceptKey) continue;
        records.forget(objectKey);
        queue?.enqueue(objectKey);
      }
    }
  }

  /** Tuples deleted by something other than one object (the resync's orphans): every kind checks again. */
  recheckAll(keys: TupleKey[]): void {
    for (const kind of this.kinds.keys()) this.recheck(kind, keys);
  }

  /** A new term of leadership: another leader may have written and deleted since this replica last led. */
  forgetAll(): void {
    for (const { records } of this.kinds.values()) records?.forgetAll();
  }

  /** SpiceDB recovered: its tuples may be gone or older than the caches; every bound kind rewrites. */
  rewriteAll(): void {
    this.forgetAll();
    for (const { queue, rewrite } of this.kinds.values()) rewrite?.().forEach((key) => queue?.enqueue(key));
  }

  private entry(kind: string): KindEntry {
    let entry = this.kinds.get(kind);
    if (!entry) {
      entry = {};
      this.kinds.set(kind, entry);
    }
    return entry;
  }
}
