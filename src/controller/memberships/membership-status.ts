import type { Membership } from '../../api/v1alpha1/index.js';
import { ProjectionReason } from '../projected/projected-kind.js';
import type { ProjectionOutcome } from '../projected/projection-rules.js';
import { nextProjectedStatus, type ProjectedStatusChange } from '../projected/projected-status.js';
import { membershipKind, REMOVED_REASON } from './membership-projection.js';

export { currentReason, isDeadLetter } from '../projected/projected-status.js';

/** Reasons of a Membership's Enforced condition. */
export const MembershipReason = {
  ...ProjectionReason,
  /** False: the membership was removed (spec.removedAt) or is being deleted; its relationships are deleted. */
  Removed: REMOVED_REASON,
} as const;
export type MembershipReason = (typeof MembershipReason)[keyof typeof MembershipReason];

/** The status a membership should have after `outcome` (nextProjectedStatus). */
export function nextMembershipStatus(
  membership: Membership,
  outcome: ProjectionOutcome,
  now: Date,
): ProjectedStatusChange {
  return nextProjectedStatus(membershipKind, membership, outcome, now);
}
