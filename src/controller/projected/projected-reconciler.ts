import type { Logger } from '../../observability/logger.js';
import type { ReconcileResult } from '../../runtime/index.js';
import { SpiceDBError } from '../../spicedb/errors.js';
import { InvalidObjectIdError } from '../../spicedb/object-id.js';
import { hasFinalizer } from '../../api/v1alpha1/index.js';
import { WriteExpectations } from '../write-expectations.js';
import {
  counts,
  ProjectionReason,
  type ProjectedObject,
  type ProjectedStatus,
  type ProjectionOutcome,
} from './projected-kind.js';
import type { ProjectedProjector } from './projected-projector.js';
import { currentReason, nextProjectedStatus } from './projected-status.js';
import type { ProjectedView } from './projected-view.js';

export interface ProjectedReconcilerOptions<T extends ProjectedObject> {
  world: ProjectedView<T>;
  projector: ProjectedProjector<T>;
  writer: {
    setFinalizer(object: T, present: boolean, signal: AbortSignal): Promise<T>;
    updateStatus(object: T, status: ProjectedStatus, signal: AbortSignal): Promise<T>;
  };
  logger: Logger;
  /** Told about every SpiceDB failure: one that says the schema is gone should be noticed at once. */
  onSpiceDBError(error: SpiceDBError): void;
  /** Whether a status written for the current generation may be believed (false once SpiceDB lost data). */
  trustStatus(): boolean;
  now?: () => Date;
}

/** Past an expiry, the next reconcile waits this much longer, so that it sees the object expired. */
const EXPIRY_MARGIN_MS = 1_000;

/**
 * Brings one object's tuples and status in line with its spec: the finalizer first (for an object that counts),
 * then SpiceDB (its tuples written, or a withdrawn or deleted object's deleted), then the status when it
 * changes. A failing projection stays visible on the object (Enforced=False, ProjectionFailed) and is retried
 * with the work queue's backoff: that is the dead letter. An object that stops counting by itself (expiry) is
 * reconciled again then.
 */
export class ProjectedReconciler<T extends ProjectedObject> {
  private readonly now: () => Date;
  private readonly expectations = new WriteExpectations();

  constructor(private readonly options: ProjectedReconcilerOptions<T>) {
    this.now = options.now ?? (() => new Date());
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> => {
    const cached = this.options.world.object(key);
    if (!cached) return this.forget(key);
    if (this.expectations.isStale(key, cached.metadata.resourceVersion)) return undefined;
    if (cached.metadata.deletionTimestamp) return this.finalize(key, cached, signal);
    let object = cached;
    if (this.counts(object) && !hasFinalizer(object)) {
      const updated = await this.unlessStale(
        key,
        object,
        this.options.writer.setFinalizer(object, true, signal),
      );
      if (!updated) return { requeue: true };
      object = updated;
    }
    const { outcome, failure } = await this.project(key, object, signal);
    const written = await this.writeStatus(key, object, outcome, signal);
    if (failure) throw failure;
    return written ? this.untilItStopsCounting(object) : { requeue: true };
  };

  private counts(object: T): boolean {
    return counts(this.options.world.kind, object);
  }

  private untilItStopsCounting(object: T): ReconcileResult | undefined {
    const until = this.counts(object) ? this.options.world.kind.countsUntil?.(object) : undefined;
    if (!until) return undefined;
    return { requeueAfter: Math.max(0, until.getTime() - this.now().getTime()) + EXPIRY_MARGIN_MS };
  }

  private async project(
    key: string,
    object: T,
    signal: AbortSignal,
  ): Promise<{ outcome: ProjectionOutcome; failure?: SpiceDBError }> {
    const kind = this.counts(object) ? 'projected' : 'withdrawn';
    try {
      this.adoptStatus(key, object);
      const { zedToken } = await this.options.projector.project(key, object, signal);
      return { outcome: { kind, zedToken } };
    } catch (error) {
      if (error instanceof InvalidObjectIdError)
        return { outcome: { kind: 'failed', message: error.message } };
      if (!(error instanceof SpiceDBError)) throw error;
      this.options.onSpiceDBError(error);
      return { outcome: { kind: 'failed', message: error.message }, failure: error };
    }
  }

  /** A process that does not know what it wrote believes a status written for the current generation. */
  private adoptStatus(key: string, object: T): void {
    const { projector, trustStatus, world } = this.options;
    if (projector.remembers(key) || !trustStatus()) return;
    const expected = world.kind.withdrawal(object)?.reason ?? ProjectionReason.Projected;
    if (currentReason(object) === expected) projector.adopt(key, object);
  }

  /** The object is being deleted: delete its tuples, then release the finalizer. */
  private async finalize(key: string, object: T, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    if (!hasFinalizer(object)) return this.forget(key);
    const { outcome, failure } = await this.project(key, object, signal);
    if (failure) {
      await this.writeStatus(key, object, outcome, signal);
      throw failure;
    }
    const released = await this.unlessStale(
      key,
      object,
      this.options.writer.setFinalizer(object, false, signal),
    );
    if (!released) return { requeue: true };
    this.options.logger.info(
      { [this.options.world.kind.name]: key },
      `${this.options.world.kind.name} relationships removed; finalizer released`,
    );
    return undefined;
  }

  private forget(key: string): undefined {
    this.options.projector.forget(key);
    this.expectations.forget(key);
    return undefined;
  }

  /** Writes the status if it changes; false when Kubernetes says the object changed meanwhile. */
  private async writeStatus(
    key: string,
    object: T,
    outcome: ProjectionOutcome,
    signal: AbortSignal,
  ): Promise<boolean> {
    const change = nextProjectedStatus(this.options.world.kind, object, outcome, this.now());
    if (!change.changed) return true;
    const updated = await this.unlessStale(
      key,
      object,
      this.options.writer.updateStatus(object, change.status, signal),
    );
    return updated !== undefined;
  }

  /** The written object; undefined when Kubernetes says the object changed or went meanwhile. */
  private unlessStale(key: string, before: T, write: Promise<T>): Promise<T | undefined> {
    return this.expectations.unlessStale(key, before.metadata.resourceVersion, write);
  }
}
