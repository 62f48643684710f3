import {
  ENFORCED_CONDITION,
  findStatusCondition,
  setEnforcedAndReady,
  type Condition,
} from '../../api/v1alpha1/index.js';
import { ProjectionReason, type ProjectedObject, type ProjectedStatus } from './projected-kind.js';
import type { ProjectionOutcome, ProjectionRules } from './projection-rules.js';
import type { StatusChange } from '../reconcile-flow.js';

export type ProjectedStatusChange = StatusChange<ProjectedStatus>;

/** Condition messages are bounded by the API (32 KiB); error messages are not. */
const MAX_MESSAGE_LENGTH = 4_096;

function conditionOf<T extends ProjectedObject>(
  rules: ProjectionRules<T>,
  object: T,
  outcome: ProjectionOutcome,
): Pick<Condition, 'status' | 'reason' | 'message'> {
  switch (outcome.kind) {
    case 'projected':
      return {
        status: 'True',
        reason: ProjectionReason.Projected,
        message: `${rules.name} written to SpiceDB`,
      };
    case 'withdrawn': {
      const withdrawal = rules.withdrawal(object) ?? { reason: 'Withdrawn', message: '' };
      return { status: 'False', reason: withdrawal.reason, message: withdrawal.message };
    }
    case 'failed':
      return {
        status: 'False',
        reason: ProjectionReason.ProjectionFailed,
        message: outcome.message.slice(0, MAX_MESSAGE_LENGTH),
      };
  }
}

/**
 * The status an object should have after `outcome`: observedGeneration, the Enforced condition
 * (lastTransitionTime kept unless its status flips) and the ZedToken of the last write (a failure keeps the
 * last success's).
 */
export function nextProjectedStatus<T extends ProjectedObject>(
  rules: ProjectionRules<T>,
  object: T,
  outcome: ProjectionOutcome,
  now: Date,
): ProjectedStatusChange {
  const previous = object.status;
  const generation = object.metadata.generation ?? 0;
  const { conditions, changed: conditionChanged } = setEnforcedAndReady(
    previous?.conditions ?? [],
    { ...conditionOf(rules, object, outcome), observedGeneration: generation },
    now,
  );
  const zedToken = outcome.kind === 'failed' ? previous?.zedToken : (outcome.zedToken ?? previous?.zedToken);
  const status: ProjectedStatus = {
    observedGeneration: generation,
    conditions,
    ...(zedToken === undefined ? {} : { zedToken }),
  };
  const changed =
    conditionChanged || previous?.observedGeneration !== generation || previous.zedToken !== zedToken;
  return { status, changed };
}

/** The reason of the object's Enforced condition, when it was set for its current generation. */
export function currentReason(object: ProjectedObject): string | undefined {
  const condition = findStatusCondition(object.status?.conditions ?? [], ENFORCED_CONDITION);
  const generation = object.metadata.generation ?? 0;
  return condition?.observedGeneration === generation && object.status?.observedGeneration === generation
    ? condition.reason
    : undefined;
}

/** A dead letter: its projection keeps failing, retried with backoff. */
export function isDeadLetter(object: ProjectedObject): boolean {
  const condition = findStatusCondition(object.status?.conditions ?? [], ENFORCED_CONDITION);
  return condition?.reason === ProjectionReason.ProjectionFailed;
}
