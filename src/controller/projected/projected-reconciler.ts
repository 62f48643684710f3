import type { Logger } from '../../observability/logger.js';
import type { ReconcileResult } from '../../runtime/index.js';
import { SpiceDBError } from '../../spicedb/errors.js';
import { InvalidObjectIdError } from '../../spicedb/object-id.js';
import {
  ReconcileFlow,
  type PhaseResult,
  type ProjectionContext,
  type SpiceDBHealth,
  type StatusChange,
} from '../reconcile-flow.js';
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

export interface ProjectedReconcilerOptions<T extends ProjectedObject> extends SpiceDBHealth {
  world: ProjectedView<T>;
  projector: ProjectedProjector<T>;
  writer: {
    setFinalizer(object: T, present: boolean, signal: AbortSignal): Promise<T>;
    updateStatus(object: T, status: ProjectedStatus, signal: AbortSignal): Promise<T>;
  };
  logger: Logger;
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
export class ProjectedReconciler<T extends ProjectedObject> extends ReconcileFlow<
  T,
  ProjectionOutcome,
  ProjectedStatus
> {
  protected readonly kindName: string;

  constructor(private readonly options: ProjectedReconcilerOptions<T>) {
    super(options.now);
    this.kindName = options.world.kind.name;
  }

  protected cached(key: string): T | undefined {
    return this.options.world.object(key);
  }

  protected forget(key: string): void {
    this.options.projector.forget(key);
  }

  /** Only an object that counts has tuples to remove when it is deleted. */
  protected wantsFinalizer(object: T): boolean {
    return this.counts(object);
  }

  private counts(object: T): boolean {
    return counts(this.options.world.kind, object);
  }

  protected addFinalizer(object: T, signal: AbortSignal): Promise<T> {
    return this.options.writer.setFinalizer(object, true, signal);
  }

  protected async project(
    key: string,
    object: T,
    { signal }: Pick<ProjectionContext, 'signal'>,
  ): Promise<PhaseResult<ProjectionOutcome>> {
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

  /** Being deleted, the object no longer counts: its projection deletes its tuples. */
  protected withdraw(key: string, object: T, signal: AbortSignal): Promise<PhaseResult<ProjectionOutcome>> {
    return this.project(key, object, { signal });
  }

  protected async releaseFinalizer(key: string, object: T, signal: AbortSignal): Promise<boolean> {
    const released = await this.unlessStale(
      key,
      object,
      this.options.writer.setFinalizer(object, false, signal),
    );
    return released !== undefined;
  }

  protected released(key: string): void {
    const { name } = this.options.world.kind;
    this.options.logger.info({ [name]: key }, `${name} relationships removed; finalizer released`);
  }

  protected nextStatus(object: T, outcome: ProjectionOutcome, now: Date): StatusChange<ProjectedStatus> {
    return nextProjectedStatus(this.options.world.kind, object, outcome, now);
  }

  protected updateStatus(object: T, status: ProjectedStatus, signal: AbortSignal): Promise<T> {
    return this.options.writer.updateStatus(object, status, signal);
  }

  /** Past an expiry, the object stops counting by itself: reconciled again then. */
  protected requeueAfter(object: T, now: Date): ReconcileResult | undefined {
    const until = this.counts(object) ? this.options.world.kind.countsUntil?.(object) : undefined;
    if (!until) return undefined;
    return { requeueAfter: Math.max(0, until.getTime() - now.getTime()) + EXPIRY_MARGIN_MS };
  }

  /** A process that does not know what it wrote believes a status written for the current generation. */
  private adoptStatus(key: string, object: T): void {
    const { projector, trustStatus, world } = this.options;
    if (projector.remembers(key) || !trustStatus()) return;
    const expected = world.kind.withdrawal(object)?.reason ?? ProjectionReason.Projected;
    if (currentReason(object) === expected) projector.adopt(key, object);
  }
}
