import type { PolicyGrant } from '../../api/v1alpha1/index.js';
import type { Relationship, RelationshipUpdate } from '../../spicedb/client.js';
import type { ClusterView } from '../cluster-view.js';
import type { KeyedMutex } from '../keyed-mutex.js';
import type { ManagedRelation } from '../managed-relations.js';
import { candidateTupleKeys, OWNER_RELATION } from '../../verdict/projection.js';
import { enforcedFingerprint, withdrawnFingerprint, type LastWrites } from './last-writes.js';
import type { RelationshipStore } from '../relationship-store.js';
import { objectOfTupleKey, parseTupleKey, tupleKey, type TupleKey } from '../../verdict/tuple-key.js';

export interface GrantProjectorOptions {
  /**
   * Must land writes in the order they were made (WriteBatcher queues them): the projector lets go of an
   * object's lock once its write is queued, not once SpiceDB answered, so that the writes of many grants on one
   * object can share a call.
   */
  store: RelationshipStore;
  world: ClusterView;
  lastWrites: LastWrites;
  mutex: KeyedMutex;
  /** The relations the controller manages: a repair reads the grant relations among them. */
  relations: ManagedRelation[];
  /**
   * Told about tuples it deleted. Another grant may have been written under one of them between the
   * decision and the delete (it was not enforceable yet when the decision was taken): it must check again.
   */
  onTuplesDeleted(keys: TupleKey[], byGrantKey: string): void;
  now?: () => Date;
}

/** How one write for a grant is made. */
export interface ProjectionWrite {
  /** The reconcile's signal: once aborted, nothing more is written. */
  signal?: AbortSignal;
  /**
   * Objects (`<type>:<id>`) on which the grant may have written tuples nobody remembers (no record of its last write
   * or in its status): their grant relations are read, and what no grant accounts for is deleted with the write.
   */
  repair?: string[];
}

const touch = (relationship: Relationship): RelationshipUpdate => ({ operation: 'touch', relationship });
const remove = (key: TupleKey): RelationshipUpdate => ({
  operation: 'delete',
  relationship: parseTupleKey(key),
});

/**
 * Writes a grant's tuples to SpiceDB and removes them. A tuple is removed only when no other enforced grant
 * projects it (decided under the lock of its object, from the caches). Writes that would change nothing, as
 * far as this process knows (LastWrites), are skipped.
 */
export class GrantProjector {
  private readonly now: () => Date;

  constructor(private readonly options: GrantProjectorOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Writes exactly `relationships` for the grant (and deletes what it projected before and no longer does). */
  async enforce(
    grantKey: string,
    relationships: Relationship[],
    { signal, repair = [] }: ProjectionWrite = {},
  ): Promise<string | undefined> {
    const { lastWrites, mutex, store } = this.options;
    const fingerprint = enforcedFingerprint(relationships);
    const record = lastWrites.get(grantKey);
    if (record?.fingerprint === fingerprint) return record.zedToken;
    const keys = relationships.map(tupleKey);
    const wanted = new Set(keys);
    const stale = (record?.keys ?? []).filter((key) => !wanted.has(key));
    const { deleted, queued } = await mutex.withLock(
      [...keys, ...stale].map(objectOfTupleKey).concat(repair),
      async () => {
        const found = (await this.grantTuplesOn(repair)).filter((key) => !wanted.has(key));
        const deletable = this.unaccountedFor([...new Set([...stale, ...found])], grantKey);
        const write = store.writeRelationshipsInBatches(
          [...relationships.map(touch), ...deletable.map(remove)],
          signal,
        );
        return { deleted: deletable, queued: { write } };
      },
    );
    const zedToken = await queued.write;
    lastWrites.set(grantKey, { fingerprint, keys, zedToken });
    if (deleted.length > 0) this.options.onTuplesDeleted(deleted, grantKey);
    return zedToken;
  }

  /**
   * Deletes what the grant projects or projected, except tuples another enforced grant projects. Returns the
   * ZedToken of the delete (or of the grant's last write, when nothing was left to delete).
   */
  async withdraw(
    grantKey: string,
    grant: PolicyGrant | undefined,
    { signal, repair = [] }: ProjectionWrite = {},
  ): Promise<{ zedToken: string | undefined; deleted: number }> {
    const { lastWrites, mutex, store, world } = this.options;
    const candidates = grant ? candidateTupleKeys(grant.spec, world.registry) : [];
    const fingerprint = withdrawnFingerprint(candidates);
    const record = lastWrites.get(grantKey);
    if (record?.fingerprint === fingerprint) return { zedToken: record.zedToken, deleted: 0 };
    const keys = [...new Set([...(record?.keys ?? []), ...candidates])];
    const objects = keys.map(objectOfTupleKey).concat(repair);
    const { deleted, queued } = await mutex.withLock(objects, async () => {
      const found = await this.grantTuplesOn(repair);
      const deletable = this.unaccountedFor([...new Set([...keys, ...found])], grantKey);
      const write =
        deletable.length > 0 ? store.writeRelationshipsInBatches(deletable.map(remove), signal) : undefined;
      return { deleted: deletable, queued: { write } };
    });
    const zedToken = (await queued.write) ?? record?.zedToken;
    lastWrites.set(grantKey, { fingerprint, keys: [], zedToken });
    if (deleted.length > 0) this.options.onTuplesDeleted(deleted, grantKey);
    return { zedToken, deleted: deleted.length };
  }

  /**
   * Records, without writing, that SpiceDB already holds `relationships` for the grant: its status says they
   * were written for its current generation (the tuples follow from the spec alone). Saves a new leader from
   * rewriting every grant; the resync it runs at once catches a SpiceDB that disagrees.
   */
  adoptEnforced(grantKey: string, relationships: Relationship[], zedToken: string): void {
    const keys = relationships.map(tupleKey);
    this.options.lastWrites.set(grantKey, {
      fingerprint: enforcedFingerprint(relationships),
      keys,
      zedToken,
    });
  }

  /** As adoptEnforced, for a grant whose status says its tuples were withdrawn at its current generation. */
  adoptWithdrawal(grantKey: string, grant: PolicyGrant, zedToken: string | undefined): void {
    const fingerprint = withdrawnFingerprint(candidateTupleKeys(grant.spec, this.options.world.registry));
    this.options.lastWrites.set(grantKey, { fingerprint, keys: [], zedToken });
  }

  /**
   * Records, without writing, the tuples the grant's status says were last written for it (an earlier
   * generation, perhaps): the next write deletes those it no longer projects.
   */
  recall(grantKey: string, keys: TupleKey[], zedToken: string | undefined): void {
    this.options.lastWrites.set(grantKey, { fingerprint: '', keys, zedToken });
  }

  /** The keys of the grant relations' tuples on `objects` (`<type>:<id>`), read fully consistent. */
  private async grantTuplesOn(objects: string[]): Promise<TupleKey[]> {
    const keys: TupleKey[] = [];
    for (const object of objects) {
      const [resourceType = '', resourceId = ''] = object.split(':');
      const relations = this.options.relations.filter(
        (managed) => managed.objectType === resourceType && managed.relation !== OWNER_RELATION,
      );
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

  private unaccountedFor(keys: TupleKey[], grantKey: string): TupleKey[] {
    const { world } = this.options;
    const evaluator = world.evaluator(this.now());
    return keys.filter((key) => world.accountFor(key, evaluator, grantKey) === undefined);
  }
}
