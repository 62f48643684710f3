import { isMember, type Membership } from '../../api/v1alpha1/index.js';
import type { RelationshipUpdate } from '../../spicedb/client.js';
import type { KeyedMutex } from '../keyed-mutex.js';
import type { RelationshipStore } from '../relationship-store.js';
import { objectOfTupleKey, tupleKey, type TupleKey } from '../../verdict/tuple-key.js';
import { projectMembership } from './membership-projection.js';
import type { MembershipWorld } from './membership-world.js';

export interface MembershipProjectorOptions {
  store: RelationshipStore;
  world: MembershipWorld;
  mutex: KeyedMutex;
  /** Told about the tuples a withdrawal deleted; `except` is the membership that deleted them. */
  onTuplesDeleted(keys: TupleKey[], except: string): void;
}

export interface MembershipWrite {
  /** Undefined when nothing had to be written. */
  zedToken: string | undefined;
}

/**
 * Writes or withdraws one membership's tuples, deciding under the lock of their SpiceDB objects from the cache
 * as it is then: a withdrawal keeps a tuple another member still projects (a group's ownership is shared by its
 * members). Remembers per membership what it last wrote, so a reconcile that changes nothing writes nothing.
 */
export class MembershipProjector {
  /** Membership key → fingerprint of the last write (member or not, and the tuples). */
  private readonly written = new Map<string, string>();

  constructor(private readonly options: MembershipProjectorOptions) {}

  /** Throws InvalidObjectIdError when an id cannot be a SpiceDB object id. */
  async project(key: string, membership: Membership, signal: AbortSignal): Promise<MembershipWrite> {
    const fingerprint = fingerprintOf(membership);
    if (this.written.get(key) === fingerprint) return { zedToken: undefined };
    const { mutex, store } = this.options;
    const objects = projectMembership(membership.spec).map((relationship) =>
      objectOfTupleKey(tupleKey(relationship)),
    );
    const { zedToken, deleted } = await mutex.withLock(objects, async () => {
      const updates = isMember(membership) ? this.touches(membership) : this.deletions(key, membership);
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
  adopt(key: string, membership: Membership): void {
    this.written.set(key, fingerprintOf(membership));
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

  private touches(membership: Membership): RelationshipUpdate[] {
    return projectMembership(membership.spec).map((relationship) => ({ operation: 'touch', relationship }));
  }

  private deletions(key: string, membership: Membership): RelationshipUpdate[] {
    return projectMembership(membership.spec)
      .filter((relationship) => !this.options.world.explain(tupleKey(relationship), key))
      .map((relationship) => ({ operation: 'delete', relationship }));
  }
}

/** What a write for the membership does: whether it counts, and its tuples. */
function fingerprintOf(membership: Membership): string {
  const keys = projectMembership(membership.spec).map(tupleKey).sort();
  return `${isMember(membership)}:${keys.join(' ')}`;
}

const isDelete = (update: RelationshipUpdate): boolean => update.operation === 'delete';
