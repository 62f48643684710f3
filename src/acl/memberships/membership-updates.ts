import { MAX_REMEMBERED_EVENTS, type MembershipKey, type MembershipSpec } from '../../api/v1alpha1/index.js';
import type { MembershipChange } from './cloud-events.js';

// What an event or a snapshot does to a membership's spec: pure functions, so that every rule of
// idempotency and ordering is decided in one place and tested without a cluster.

export type EventOutcome = 'applied' | 'duplicate' | 'stale';

export interface MembershipUpdate {
  outcome: EventOutcome;
  /** The spec after the event: the one given, unchanged, unless the outcome is `applied`. */
  spec: MembershipSpec | undefined;
}

/** The time a membership's state was last set, in milliseconds; -Infinity when never. */
function changedAt(spec: MembershipSpec | undefined): number {
  const time = Date.parse(spec?.changedAt ?? '');
  return Number.isNaN(time) ? -Infinity : time;
}

/**
 * An event already applied to the membership (same source and id) is a duplicate; an event older than the
 * state it would change is stale; anything else sets the state and is remembered. An event as old as the
 * current state is applied: two events of one instant apply in the order they arrive.
 */
export function decideEvent(spec: MembershipSpec | undefined, change: MembershipChange): MembershipUpdate {
  const seen = spec?.appliedEvents?.some((event) => event.source === change.source && event.id === change.id);
  if (seen) return { outcome: 'duplicate', spec };
  if (change.time < changedAt(spec)) return { outcome: 'stale', spec };
  const applied = { source: change.source, id: change.id };
  const time = new Date(change.time).toISOString();
  return {
    outcome: 'applied',
    spec: {
      ...stateOf(change.key, change.member ? undefined : time, time),
      appliedEvents: [applied, ...(spec?.appliedEvents ?? [])].slice(0, MAX_REMEMBERED_EVENTS),
    },
  };
}

/** Applies events of one membership in the order given (sort them with inTimeOrder); outcomes in that order. */
export function decideEvents(
  spec: MembershipSpec | undefined,
  changes: readonly MembershipChange[],
): { outcomes: EventOutcome[]; spec: MembershipSpec | undefined } {
  const outcomes: EventOutcome[] = [];
  let current = spec;
  for (const change of changes) {
    const decision = decideEvent(current, change);
    outcomes.push(decision.outcome);
    current = decision.spec;
  }
  return { outcomes, spec: current };
}

/** Oldest first; a stable sort, so events of one instant keep the order in which they arrived. */
export function inTimeOrder<T extends { change: MembershipChange }>(events: readonly T[]): T[] {
  return [...events].sort((a, b) => a.change.time - b.change.time);
}

/**
 * A snapshot is authoritative: it sets the state whatever the membership's history, and dates a change `now`, so
 * that any event from before the snapshot about it arriving later is stale. A membership already in the state
 * the snapshot says (a missing one counts as removed) is answered as given: nothing to write.
 */
export function decideSnapshot(
  spec: MembershipSpec | undefined,
  key: MembershipKey,
  member: boolean,
  now: Date,
): MembershipSpec | undefined {
  if (isMemberSpec(spec) === member) return spec;
  const at = now.toISOString();
  return {
    ...stateOf(key, member ? undefined : at, at),
    ...(spec?.appliedEvents ? { appliedEvents: spec.appliedEvents } : {}),
  };
}

/** Whether the spec makes the user a member (present and not removed). */
export function isMemberSpec(spec: MembershipSpec | undefined): boolean {
  return spec !== undefined && spec.removedAt === undefined;
}

function stateOf(key: MembershipKey, removedAt: string | undefined, changedAt: string): MembershipSpec {
  return {
    organisationId: key.organisationId,
    ...(key.groupId === undefined ? {} : { groupId: key.groupId }),
    userId: key.userId,
    ...(removedAt === undefined ? {} : { removedAt }),
    changedAt,
  };
}
