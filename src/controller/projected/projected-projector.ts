import type { RelationshipUpdate } from '../../spicedb/client.js';
import type { KeyedMutex } from '../keyed-mutex.js';
import type { RelationshipStore } from '../relationship-store.js';
import { objectOfTupleKey, tupleKey, type TupleKey } from '../../verdict/tuple-key.js';
import { counts, type ProjectedObject } from './projected-kind.js';
import type { ProjectedView } from './projected-view.js';

export interface ProjectorOptions<T extends ProjectedObject> {
  store: RelationshipStore;
  world: ProjectedView<T>;
  mutex: KeyedMutex;
  /** Told about the tuples a withdrawal deleted; `except` is the object that deleted them. */
  onTuplesDeleted(keys: TupleKey[], except: string): void;
}

export interface ProjectionWrite {
  /** Undefined when nothing had to be written. */
  zedToken: string | undefined;
}

/**
 * Writes or withdraws one object's tuples, deciding under the lock of their SpiceDB objects from the cache as it
 * is then: a withdrawal keeps a tuple another object still projects (a group's ownership is shared by its
 * members, an agent's ownership by its delegations). Remembers per object what it last wrote, so a reconcile
 * that changes nothing writes nothing.
 */
export class ProjectedProjector<T extends ProjectedObject> {
  /** Object key → fingerprint of the last write (counting or not, and the tuples). */
  private readonly written = new Map<string, string>();

  constructor(private readonly options: ProjectorOptions<T>) {}

  /** Throws InvalidObjectIdError when an id cannot be a SpiceDB object id. */
  async project(key: string, object: T, signal: AbortSignal): Promise<ProjectionWrite> {
    const fingerprint = this.fingerprintOf(object);
    if (this.written.get(key) === fingerprint) return { zedToken: undefined };
    const { mutex, store, world } = this.options;
    const objects = world.kind
      .project(object)
      .map((relationship) => objectOfTupleKey(tupleKey(relationship)));
    const { zedToken, deleted } = await mutex.withLock(objects, async () => {
      const updates = counts(world.kind, object) ? this.touches(object) : this.deletions(key, object);
      const token = updates.length > 0 ? await store.writeRelationshipsInBatches(updates, signal) : undefined;
      return {
        zedToken: token,
        deleted: updates.filter(isDelete).map((update) => tupleKey(update.relationship)),
      };
    });
    this.written.set(key, fingerprint);
    if (deleted.length > 0) this.options.onTuplesDeleted(deleted, key);
    return { zedToken };
  }

  /** The status says this was written for the current generation: believed without writing again. */
  adopt(key: string, object: T): void {
    this.written.set(key, this.fingerprintOf(object));
  }

  remembers(key: string): boolean {
    return this.written.has(key);
  }

  forget(key: string): void {
    this.written.delete(key);
  }

  /** A new term of leadership or a SpiceDB recovery: anything may have changed behind this process. */
  forgetAll(): void {
    this.written.clear();
  }

  private touches(object: T): RelationshipUpdate[] {
    return this.options.world.kind
      .project(object)
      .map((relationship) => ({ operation: 'touch', relationship }));
  }

  private deletions(key: string, object: T): RelationshipUpdate[] {
    const { world } = this.options;
    return world.kind
      .project(object)
      .filter((relationship) => !world.accountFor(tupleKey(relationship), key))
      .map((relationship) => ({ operation: 'delete', relationship }));
  }

  /** What a write for the object does: whether it counts, and its tuples. */
  private fingerprintOf(object: T): string {
    const { kind } = this.options.world;
    const keys = kind.project(object).map(tupleKey).sort();
    return `${counts(kind, object)}:${keys.join(' ')}`;
  }
}

const isDelete = (update: RelationshipUpdate): boolean => update.operation === 'delete';
