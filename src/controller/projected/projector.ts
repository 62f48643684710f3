import type { Relationship, RelationshipUpdate } from '../../spicedb/client.js';
import type { KeyedMutex } from '../keyed-mutex.js';
import type { RelationshipStore } from '../relationship-store.js';
import { objectOfTupleKey, parseTupleKey, tupleKey, type TupleKey } from '../../verdict/tuple-key.js';
import { enforcedFingerprint, withdrawnFingerprint, type LastWrites } from './last-writes.js';
import type { Decision, ProjectedKind, ProjectedObject } from './projected-kind.js';

export interface ProjectorOptions<T extends ProjectedObject> {
  /**
   * Must land writes in the order they were made (WriteBatcher queues them): the projector lets go of an
   * object's lock once its write is queued, not once SpiceDB answered, so that the writes of many objects on one
   * SpiceDB object can share a call.
   */
  store: RelationshipStore;
  kind: Pick<ProjectedKind<T, unknown, unknown>, 'relations' | 'accounting' | 'candidates'>;
  lastWrites: LastWrites;
  mutex: KeyedMutex;
  /**
   * Told about tuples it deleted. Another object may have been written under one of them between the decision
   * and the delete (it did not count yet when the decision was taken): it must check again.
   */
  onTuplesDeleted(keys: TupleKey[], byKey: string): void;
  now?: () => Date;
}

/** How one write for an object is made. */
export interface ProjectionWrite {
  /** The reconcile's signal: once aborted, nothing more is written. */
  signal?: AbortSignal;
  /**
   * SpiceDB objects (`<type>:<id>`) on which the object may have written tuples nobody remembers (no record of
   * its last write or in its status): the kind's relations there are read, and what nothing accounts for is deleted
   * with the write.
   */
  repair?: string[];
}

const touch = (relationship: Relationship): RelationshipUpdate => ({ operation: 'touch', relationship });
const remove = (key: TupleKey): RelationshipUpdate => ({
  operation: 'delete',
  relationship: parseTupleKey(key),
});

/**
 * Writes an object's tuples to SpiceDB and removes them, for every projected kind. A tuple is removed only when
 * no other object that counts accounts for it (decided under the lock of its SpiceDB object, from the caches): a
 * tuple two grants project, a group's ownership its members share, an agent's its delegations share. Writes that
 * would change nothing, as far as this process knows (LastWrites), are skipped.
 */
export class Projector<T extends ProjectedObject> {
  private readonly now: () => Date;

  constructor(private readonly options: ProjectorOptions<T>) {
    this.now = options.now ?? (() => new Date());
  }

  /** Writes exactly `relationships` for the object (and deletes what it projected before and no longer does). */
  async enforce(
    key: string,
    relationships: Relationship[],
    { signal, repair = [] }: ProjectionWrite = {},
  ): Promise<string | undefined> {
    const { lastWrites, mutex, store } = this.options;
    const fingerprint = enforcedFingerprint(relationships);
    const record = lastWrites.get(key);
    if (record?.fingerprint === fingerprint) return record.zedToken;
    const keys = relationships.map(tupleKey);
    const wanted = new Set(keys);
    const stale = (record?.keys ?? []).filter((staleKey) => !wanted.has(staleKey));
    const { deleted, queued } = await mutex.withLock(
      [...keys, ...stale].map(objectOfTupleKey).concat(repair),
      async () => {
        const found = (await this.tuplesOn(repair)).filter((foundKey) => !wanted.has(foundKey));
        const deletable = this.unaccountedFor([...new Set([...stale, ...found])], key);
        const write = store.writeRelationshipsInBatches(
          [...relationships.map(touch), ...deletable.map(remove)],
          signal,
        );
        return { deleted: deletable, queued: { write } };
      },
    );
    const zedToken = await queued.write;
    lastWrites.set(key, { fingerprint, keys, zedToken });
    if (deleted.length > 0) this.options.onTuplesDeleted(deleted, key);
    return zedToken;
  }

  /**
   * Deletes what the object projects or projected, except tuples another object accounts for. Returns the ZedToken
   * of the delete (or of the object's last write, when nothing was left to delete).
   */
  async withdraw(
    key: string,
    object: T | undefined,
    { signal, repair = [] }: ProjectionWrite = {},
  ): Promise<{ zedToken: string | undefined; deleted: number }> {
    const { lastWrites, mutex, store } = this.options;
    const candidates = object ? this.options.kind.candidates(object) : [];
    const fingerprint = withdrawnFingerprint(candidates);
    const record = lastWrites.get(key);
    if (record?.fingerprint === fingerprint) return { zedToken: record.zedToken, deleted: 0 };
    const keys = [...new Set([...(record?.keys ?? []), ...candidates])];
    const objects = keys.map(objectOfTupleKey).concat(repair);
    const { deleted, queued } = await mutex.withLock(objects, async () => {
      const found = await this.tuplesOn(repair);
      const deletable = this.unaccountedFor([...new Set([...keys, ...found])], key);
      const write =
        deletable.length > 0 ? store.writeRelationshipsInBatches(deletable.map(remove), signal) : undefined;
      return { deleted: deletable, queued: { write } };
    });
    const zedToken = (await queued.write) ?? record?.zedToken;
    lastWrites.set(key, { fingerprint, keys: [], zedToken });
    if (deleted.length > 0) this.options.onTuplesDeleted(deleted, key);
    return { zedToken, deleted: deleted.length };
  }

  /**
   * Records, without writing, that SpiceDB already holds what `decision` gives: the object's status says it was
   * written for the current generation. Saves a new leader from rewriting every object; the resync it runs at
   * once catches a SpiceDB that disagrees.
   */
  adopt(key: string, object: T, decision: Decision, zedToken: string | undefined): void {
    const { relationships } = decision;
    this.options.lastWrites.set(
      key,
      relationships
        ? { fingerprint: enforcedFingerprint(relationships), keys: relationships.map(tupleKey), zedToken }
        : { fingerprint: withdrawnFingerprint(this.options.kind.candidates(object)), keys: [], zedToken },
    );
  }

  /**
   * Records, without writing, the tuples the object's status says were last written for it (an earlier
   * generation, perhaps): the next write deletes those it no longer projects.
   */
  recall(key: string, keys: TupleKey[], zedToken: string | undefined): void {
    this.options.lastWrites.set(key, { fingerprint: '', keys, zedToken });
  }

  /** The keys of the kind's tuples on `objects` (`<type>:<id>`), read fully consistent. */
  private async tuplesOn(objects: string[]): Promise<TupleKey[]> {
    const keys: TupleKey[] = [];
    for (const object of objects) {
      const [resourceType = '', resourceId = ''] = object.split(':');
      const relations = this.options.kind.relations.filter((managed) => managed.objectType === resourceType);
      for (const { relation } of relations) {
        const pages = this.options.store.readRelationships(
          { resourceType, resourceId, relation },
          { consistency: { fullyConsistent: true } },
        );
        for await (const page of pages) keys.push(...page.relationships.map(tupleKey));
      }
    }
    return keys;
  }

  private unaccountedFor(keys: TupleKey[], exceptKey: string): TupleKey[] {
    const accounting = this.options.kind.accounting(this.now());
    return keys.filter((key) => accounting.accountFor(key, exceptKey) === undefined);
  }
}
