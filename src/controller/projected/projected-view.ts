import { objectKey, type ReconcileResult } from '../../runtime/index.js';
import type { Relationship } from '../../spicedb/client.js';
import type { Indexer } from '../../kube/indexes.js';
import { hasFinalizer } from '../../api/v1alpha1/index.js';
import { tupleKey, type TupleKey } from '../../verdict/tuple-key.js';
import type { StatusChange } from '../reconcile-flow.js';
import type {
  Decision,
  TupleAccounting,
  FailedProjection,
  ProjectedKind,
  ProjectedObject,
  ProjectedStatus,
} from './projected-kind.js';
import { nextProjectedStatus } from './projected-status.js';
import { counts, type ProjectionOutcome, type ProjectionRules } from './projection-rules.js';

const BY_TUPLE = 'tupleKey';

/** Past an expiry, the next reconcile waits this much longer, so that it sees the object expired. */
const EXPIRY_MARGIN_MS = 1_000;

/**
 * The controller's view of one kind whose projection follows from each object alone (its informer's cache),
 * indexed by the tuples the objects project, and that kind as the projection machinery sees it: which objects
 * account for a tuple, what the resync wants, the status its rules give.
 */
export class ProjectedView<T extends ProjectedObject> implements ProjectedKind<
  T,
  ProjectionOutcome,
  ProjectedStatus
> {
  readonly name: string;
  readonly relations: ProjectionRules<T>['relations'];

  constructor(
    private readonly objects: Indexer<T>,
    readonly rules: ProjectionRules<T>,
  ) {
    this.name = rules.name;
    this.relations = rules.relations;
    objects.addIndex(BY_TUPLE, (object) => this.projectionOf(object).map(tupleKey));
  }

  object(key: string): T | undefined {
    return this.objects.get(key);
  }

  all(): T[] {
    return this.objects.list();
  }

  keysProjecting(key: TupleKey): string[] {
    return this.objects.byIndex(BY_TUPLE, key).map(objectKey);
  }

  /** Every relationship the counting objects want now. */
  *wanted(): Iterable<Relationship[]> {
    for (const object of this.all()) if (counts(this.rules, object)) yield this.projectionOf(object);
  }

  accounting(): TupleAccounting {
    return {
      accountFor: (key, except) => this.accountForIf(key, (object) => objectKey(object) !== except),
      accountForWritable: (key) => this.accountForIf(key, hasFinalizer),
    };
  }

  decide(object: T): Decision {
    const withdrawal = this.rules.withdrawal(object);
    return withdrawal ? { withdrawal } : { relationships: this.rules.project(object) };
  }

  candidates(object: T): TupleKey[] {
    return this.rules.project(object).map(tupleKey);
  }

  /** Only an object that counts has tuples to remove when it is deleted. */
  wantsFinalizer(object: T): boolean {
    return counts(this.rules, object);
  }

  outcome(decision: Decision, zedToken: string | undefined): ProjectionOutcome {
    return { kind: decision.withdrawal ? 'withdrawn' : 'projected', zedToken };
  }

  nextStatus(
    object: T,
    outcome: ProjectionOutcome | FailedProjection,
    now: Date,
  ): StatusChange<ProjectedStatus> {
    return nextProjectedStatus(this.rules, object, outcome, now);
  }

  /** Past an expiry, the object stops counting by itself: reconciled again then. */
  requeueAfter(object: T, now: Date): ReconcileResult | undefined {
    const until = counts(this.rules, object) ? this.rules.countsUntil?.(object) : undefined;
    if (!until) return undefined;
    return { requeueAfter: Math.max(0, until.getTime() - now.getTime()) + EXPIRY_MARGIN_MS };
  }

  private accountForIf(key: TupleKey, accept: (object: T) => boolean): Relationship | undefined {
    const accounting = this.objects
      .byIndex(BY_TUPLE, key)
      .find((object) => counts(this.rules, object) && accept(object));
    return accounting && this.projectionOf(accounting).find((relationship) => tupleKey(relationship) === key);
  }

  /** None when an id cannot be a SpiceDB object id: index functions must not throw. */
  private projectionOf(object: T): Relationship[] {
    try {
      return this.rules.project(object);
    } catch {
      return [];
    }
  }
}
