import { objectKey } from '../../runtime/index.js';
import type { Relationship } from '../../spicedb/client.js';
import type { Indexer } from '../../kube/indexes.js';
import { hasFinalizer } from '../../api/v1alpha1/index.js';
import { parseTupleKey, tupleKey, type TupleKey } from '../../verdict/tuple-key.js';
import { counts, type ProjectedKind, type ProjectedObject } from './projected-kind.js';

const BY_TUPLE = 'tupleKey';

/**
 * The controller's view of one projected kind (its informer's cache), indexed by the tuples the objects
 * project: which objects account for a tuple, what the resync wants.
 */
export class ProjectedView<T extends ProjectedObject> {
  constructor(
    private readonly objects: Indexer<T>,
    readonly kind: ProjectedKind<T>,
  ) {
    objects.addIndex(BY_TUPLE, (object) => this.projectedKeys(object));
  }

  object(key: string): T | undefined {
    return this.objects.get(key);
  }

  all(): T[] {
    return this.objects.list();
  }

  /** Objects whose projection includes `key`, counting or not. */
  withTupleKey(key: TupleKey): T[] {
    return this.objects.byIndex(BY_TUPLE, key);
  }

  /** Whether the tuple is of a relation this kind manages. */
  manages(key: TupleKey): boolean {
    const { resource, relation } = parseTupleKey(key);
    return this.kind.relations.some(
      (managed) => managed.objectType === resource.type && managed.relation === relation,
    );
  }

  /** Every relationship the counting objects want now. */
  wantedRelationships(): Relationship[] {
    return this.all()
      .filter((object) => counts(this.kind, object))
      .flatMap((object) => this.projectionOf(object));
  }

  /** The relationship a counting object other than `except` (an object key) wants under `key`, if any. */
  accountFor(key: TupleKey, except?: string): Relationship | undefined {
    return this.accountForIf(key, (object) => objectKey(object) !== except);
  }

  /**
   * As `accountFor`, but only for an object that holds its finalizer: before that nothing guarantees that
   * deleting it removes the tuple again, so its reconcile writes it, finalizer first.
   */
  accountForWritable(key: TupleKey): Relationship | undefined {
    return this.accountForIf(key, hasFinalizer);
  }

  private accountForIf(key: TupleKey, accept: (object: T) => boolean): Relationship | undefined {
    const accounting = this.withTupleKey(key).find((object) => counts(this.kind, object) && accept(object));
    return accounting && this.projectionOf(accounting).find((relationship) => tupleKey(relationship) === key);
  }

  /** None when an id cannot be a SpiceDB object id: index functions must not throw. */
  private projectionOf(object: T): Relationship[] {
    try {
      return this.kind.project(object);
    } catch {
      return [];
    }
  }

  private projectedKeys(object: T): TupleKey[] {
    return this.projectionOf(object).map(tupleKey);
  }
}
