import {
  ENFORCED_CONDITION,
  findStatusCondition,
  setStatusCondition,
  type Condition,
  type Membership,
  type MembershipStatus,
} from '../../api/v1alpha1/index.js';

/** Reasons of a Membership's Enforced condition. */
export const MembershipReason = {
  /** True: the member's relationships are written. */
  Projected: 'Projected',
  /** False: the membership was removed (spec.removedAt) or is being deleted; its relationships are deleted. */
  Removed: 'Removed',
  /** False: SpiceDB failed the write (retried with backoff), or an id cannot be a SpiceDB object id. */
  ProjectionFailed: 'ProjectionFailed',
} as const;
export type MembershipReason = (typeof MembershipReason)[keyof typeof MembershipReason];

/** What a reconcile achieved for a membership. */
export type MembershipOutcome =
  | { kind: 'projected'; zedToken: string | undefined }
  | { kind: 'removed'; zedToken: string | undefined }
  | { kind: 'failed'; message: string };

export interface MembershipStatusChange {
  status: MembershipStatus;
  /** False: the status already says all this. */
  changed: boolean;
}

/** Condition messages are bounded by the API (32 KiB); error messages are not. */
const MAX_MESSAGE_LENGTH = 4_096;

function conditionOf(outcome: MembershipOutcome): Pick<Condition, 'status' | 'reason' | 'message'> {
  switch (outcome.kind) {
    case 'projected':
      return { status: 'True', reason: MembershipReason.Projected, message: 'membership written to SpiceDB' };
    case 'removed':
      return {
        status: 'False',
        reason: MembershipReason.Removed,
        message: 'membership deleted from SpiceDB',
      };
    case 'failed':
      return {
        status: 'False',
        reason: MembershipReason.ProjectionFailed,
        message: outcome.message.slice(0, MAX_MESSAGE_LENGTH),
      };
  }
}

/**
 * The status a membership should have after `outcome`: observedGeneration, the Enforced condition
 * (lastTransitionTime kept unless its status flips) and the ZedToken of the last write (a failure keeps the
 * last success's).
 */
export function nextMembershipStatus(
  membership: Membership,
  outcome: MembershipOutcome,
  now: Date,
): MembershipStatusChange {
  const previous = membership.status;
  const generation = membership.metadata.generation ?? 0;
  const { conditions, changed: conditionChanged } = setStatusCondition(
    previous?.conditions ?? [],
    { type: ENFORCED_CONDITION, ...conditionOf(outcome), observedGeneration: generation },
    now,
  );
  const zedToken = outcome.kind === 'failed' ? previous?.zedToken : (outcome.zedToken ?? previous?.zedToken);
  const status: MembershipStatus = {
    observedGeneration: generation,
    conditions,
    ...(zedToken === undefined ? {} : { zedToken }),
  };
  const changed =
    conditionChanged || previous?.observedGeneration !== generation || previous.zedToken !== zedToken;
  return { status, changed };
}

/** The reason of the membership's Enforced condition, when it was set for its current generation. */
export function currentReason(membership: Membership): string | undefined {
  const condition = findStatusCondition(membership.status?.conditions ?? [], ENFORCED_CONDITION);
  const generation = membership.metadata.generation ?? 0;
  return condition?.observedGeneration === generation && membership.status?.observedGeneration === generation
    ? condition.reason
    : undefined;
}

/** A dead letter: its projection keeps failing, retried with backoff. */
export function isDeadLetter(membership: Membership): boolean {
  const condition = findStatusCondition(membership.status?.conditions ?? [], ENFORCED_CONDITION);
  return condition?.reason === MembershipReason.ProjectionFailed;
}
