import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { ReconcileResult } from '../runtime/index.js';
import type { SpiceDBError } from '../spicedb/errors.js';
import { hasFinalizer } from '../api/v1alpha1/index.js';
import { SpanKind } from '@opentelemetry/api';
import { inSpan, linksToTraceparent, TRACEPARENT_ANNOTATION } from '../observability/tracing.js';
import { WriteExpectations } from './write-expectations.js';

/** What a SpiceDB phase achieved; `failure` is rethrown once the status says so, for the queue's backoff. */
export interface PhaseResult<Outcome> {
  outcome: Outcome;
  failure?: SpiceDBError;
}

/** What the reconcilers learn from the SpiceDB health prober. */
export interface SpiceDBHealth {
  /** Told about every SpiceDB failure: one that says the schema is gone should be noticed at once. */
  onSpiceDBError(error: SpiceDBError): void;
  /** Whether a status written for the current generation may be believed (false once SpiceDB lost data). */
  trustStatus(): boolean;
}

/** How one reconcile projects the object it looked at. */
export interface ProjectionContext {
  /** The reconcile's clock reading: the projection, the status and the requeue agree on it. */
  now: Date;
  signal: AbortSignal;
  /** Whether the object held the finalizer before this reconcile (it may have written tuples before). */
  hadFinalizer: boolean;
}

export interface StatusChange<Status> {
  status: Status;
  /** False: the status already says all this. */
  changed: boolean;
}

/**
 * The reconcile flow that PolicyGrants and the projected kinds (Memberships, Delegations) share, in
 * cluster-api's shape: `reconcile` looks the object up and hands it to `reconcileDelete` or `reconcileNormal`;
 * the subclass supplies each phase for its kind.
 *
 * - normal: the finalizer first (so a deletion always passes through the controller), then SpiceDB, then the
 *   status when it changes, then a requeue for the moment the object stops counting by itself;
 * - delete: the relationships first, then the finalizer is released;
 * - gone from the cache: what this process recorded for the object is dropped.
 *
 * A SpiceDB failure is written to the status before it is rethrown: the work queue retries it with backoff,
 * and the object shows it meanwhile. Every write carries the resourceVersion the decision was made on; a 409
 * or 404 requeues, and the write expectations keep a reconcile from deciding on a version this process
 * replaced and the cache has not caught up with.
 */
export abstract class ReconcileFlow<T extends { metadata: V1ObjectMeta }, Outcome, Status> {
  protected readonly now: () => Date;
  private readonly expectations = new WriteExpectations();

  constructor(now: (() => Date) | undefined) {
    this.now = now ?? (() => new Date());
  }

  /** Lowercase, for span names: `policygrant`, `membership`. */
  protected abstract readonly kindName: string;

  /**
   * Traced, each reconcile is the root span `reconcile <kind>`, linked to the request that wrote the object
   * (its traceparent annotation); its Kubernetes and SpiceDB calls are its children.
   */
  readonly reconcile = (key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> =>
    inSpan(
      () => ({
        name: `reconcile ${this.kindName}`,
        kind: SpanKind.INTERNAL,
        root: true,
        links: linksToTraceparent(this.cached(key)?.metadata.annotations?.[TRACEPARENT_ANNOTATION]),
        attributes: { 'policygrant.object.key': key },
      }),
      () => this.reconcileKey(key, signal),
    );

  private async reconcileKey(key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const cached = this.cached(key);
    if (!cached) return this.forgetGone(key);
    if (this.expectations.isStale(key, cached.metadata.resourceVersion)) return undefined;
    if (cached.metadata.deletionTimestamp) return this.reconcileDelete(key, cached, signal);
    return this.reconcileNormal(key, cached, signal);
  }

  /** The object as the cache holds it now. */
  protected abstract cached(key: string): T | undefined;
  /** The object is gone from the cache: drop (and, where needed, undo) what this process wrote for it. */
  protected abstract forget(key: string): Promise<void> | void;
  /** Whether the object must hold the finalizer before anything is written for it. */
  protected abstract wantsFinalizer(object: T): boolean;
  protected abstract addFinalizer(object: T, signal: AbortSignal): Promise<T>;
  /** Writes or withdraws the object's tuples as its spec says now. */
  protected abstract project(
    key: string,
    object: T,
    context: ProjectionContext,
  ): Promise<PhaseResult<Outcome>>;
  /** Deletes the tuples of an object being deleted; undefined or no failure once they are gone. */
  protected abstract withdraw(
    key: string,
    object: T,
    signal: AbortSignal,
  ): Promise<PhaseResult<Outcome> | undefined>;
  /** Releases the finalizer; false when the object changed meanwhile (the reconcile runs again). */
  protected abstract releaseFinalizer(key: string, object: T, signal: AbortSignal): Promise<boolean>;
  /** The finalizer is released: the object's life in this controller is over. */
  protected abstract released(key: string): void;
  protected abstract nextStatus(object: T, outcome: Outcome, now: Date): StatusChange<Status>;
  protected abstract updateStatus(object: T, status: Status, signal: AbortSignal): Promise<T>;
  /** When the object must be looked at again although nothing changes it (an expiry). */
  protected abstract requeueAfter(object: T, now: Date): ReconcileResult | undefined;

  /** Runs once the status write landed (an Event on a transition, say). */
  protected statusWritten(_written: T, _change: StatusChange<Status>, _now: Date): void {}

  /** Runs before the finalizer is released (the audit of a deletion); a failure retries. */
  protected async beforeRelease(_object: T): Promise<void> {}

  private async reconcileNormal(
    key: string,
    cached: T,
    signal: AbortSignal,
  ): Promise<ReconcileResult | undefined> {
    let object = cached;
    if (this.wantsFinalizer(object) && !hasFinalizer(object)) {
      const updated = await this.unlessStale(key, object, this.addFinalizer(object, signal));
      if (!updated) return { requeue: true };
      object = updated;
    }
    const now = this.now();
    const context = { now, signal, hadFinalizer: hasFinalizer(cached) };
    const { outcome, failure } = await this.project(key, object, context);
    const written = await this.writeStatus(key, object, outcome, now, signal);
    if (failure) throw failure;
    if (!written) return { requeue: true };
    return this.requeueAfter(object, now);
  }

  private async reconcileDelete(
    key: string,
    object: T,
    signal: AbortSignal,
  ): Promise<ReconcileResult | undefined> {
    if (!hasFinalizer(object)) return this.forgetGone(key);
    const withdrawn = await this.withdraw(key, object, signal);
    if (withdrawn?.failure) {
      await this.writeStatus(key, object, withdrawn.outcome, this.now(), signal);
      throw withdrawn.failure;
    }
    await this.beforeRelease(object);
    if (!(await this.releaseFinalizer(key, object, signal))) return { requeue: true };
    this.released(key);
    return undefined;
  }

  private async forgetGone(key: string): Promise<undefined> {
    await this.forget(key);
    this.expectations.forget(key);
    return undefined;
  }

  /** Writes the status if it changes; false when Kubernetes says the object changed meanwhile. */
  private async writeStatus(
    key: string,
    object: T,
    outcome: Outcome,
    now: Date,
    signal: AbortSignal,
  ): Promise<boolean> {
    const change = this.nextStatus(object, outcome, now);
    if (!change.changed) return true;
    const updated = await this.unlessStale(key, object, this.updateStatus(object, change.status, signal));
    if (!updated) return false;
    this.statusWritten(updated, change, now);
    return true;
  }

  /** The written object; undefined when Kubernetes says the object changed or went meanwhile. */
  protected unlessStale(key: string, before: T, write: Promise<T>): Promise<T | undefined> {
    return this.expectations.unlessStale(key, before.metadata.resourceVersion, write);
  }
}
