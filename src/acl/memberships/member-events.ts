import type { Counter, Registry as MetricsRegistry } from 'prom-client';
import { membershipKeyString } from '../../api/v1alpha1/index.js';
import { counter } from '../../observability/metrics.js';
import { settleAll, valuesOrThrow } from '../concurrency.js';
import { membershipChange, type MemberEvent, type MembershipChange } from './cloud-events.js';
import { decideEvents, inTimeOrder, type EventOutcome } from './membership-updates.js';
import type { MembershipStore } from './membership-store.js';

/** Memberships written at once by one request. */
const WRITE_CONCURRENCY = 16;

export interface EventResult {
  id: string;
  outcome: EventOutcome;
}

interface Indexed {
  index: number;
  change: MembershipChange;
}

/**
 * POST /events, once the batch is valid: one read-modify-write per membership the batch touches, applying
 * its events in time order; outcomes in request order. Memberships are written in parallel and
 * independently: when one write fails the others still happen, and the request fails with that error.
 */
export class MemberEventApplier {
  private readonly received: Counter<'type' | 'outcome'>;

  constructor(
    private readonly store: MembershipStore,
    metrics: MetricsRegistry,
  ) {
    this.received = counter(metrics, {
      name: 'acl_membership_events_total',
      help: 'Membership events of valid POST /events requests that were processed, by type and outcome (applied, duplicate, stale).',
      labelNames: ['type', 'outcome'],
    });
  }

  async apply(events: readonly MemberEvent[]): Promise<EventResult[]> {
    const outcomes: EventOutcome[] = new Array(events.length);
    const { first, repeats } = splitRepeats(
      events.map((event, index) => ({ index, change: membershipChange(event) })),
    );
    for (const repeat of repeats) outcomes[repeat.index] = 'duplicate';
    const groups = [...groupByMembership(first).values()].map(inTimeOrder);
    const applied = await settleAll(groups, WRITE_CONCURRENCY, (group) =>
      this.store.update((group[0] as Indexed).change.key, (spec) => {
        const decided = decideEvents(
          spec,
          group.map((event) => event.change),
        );
        return { spec: decided.spec, result: decided.outcomes };
      }),
    );
    valuesOrThrow(applied).forEach((groupOutcomes, groupIndex) =>
      groupOutcomes.forEach((outcome, position) => {
        outcomes[(groups[groupIndex]?.[position] as Indexed).index] = outcome;
      }),
    );
    return events.map((event, index) => {
      const outcome = outcomes[index] as EventOutcome;
      this.received.inc({ type: event.type, outcome });
      return { id: event.id, outcome };
    });
  }
}

/** A batch may carry one event twice (a producer's retry): the later copies are duplicates of the first. */
function splitRepeats(events: readonly Indexed[]): { first: Indexed[]; repeats: Indexed[] } {
  const seen = new Set<string>();
  const first: Indexed[] = [];
  const repeats: Indexed[] = [];
  for (const event of events) {
    const identity = JSON.stringify([event.change.source, event.change.id]);
    (seen.has(identity) ? repeats : first).push(event);
    seen.add(identity);
  }
  return { first, repeats };
}

function groupByMembership(events: readonly Indexed[]): Map<string, Indexed[]> {
  const groups = new Map<string, Indexed[]>();
  for (const event of events) {
    const key = membershipKeyString(event.change.key);
    const group = groups.get(key);
    if (group) group.push(event);
    else groups.set(key, [event]);
  }
  return groups;
}
