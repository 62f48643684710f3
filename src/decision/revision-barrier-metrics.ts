import type { Registry as MetricsRegistry } from 'prom-client';
import { counter, gauge } from '../observability/metrics.js';
import { CONSISTENCY_SOURCES } from './consistency-choice.js';
import type { ConsistencySource } from './consistency-choice.js';
import type { RevisionWatchEvents, WatchMessageKind, WatchRestartReason } from './revision-watch.js';

/** How a confirmation request ended (revision-route.ts). */
export type ConfirmationOutcome = 'passed' | 'not_delivered' | 'watch_not_current';

export interface RevisionBarrierMetrics extends RevisionWatchEvents {
  chosen(source: ConsistencySource): void;
  confirmed(outcome: ConfirmationOutcome): void;
}

export interface RevisionBarrierGauges {
  /** performance.now() of the Watch's last message. */
  lastMessageAt(): number | undefined;
  trackedEntries(): number;
}

const RESTART_REASONS: readonly WatchRestartReason[] = ['error', 'ended', 'unknown_revision'];
const MESSAGE_KINDS: readonly WatchMessageKind[] = ['change', 'schema', 'checkpoint'];
const CONFIRMATION_OUTCOMES: readonly ConfirmationOutcome[] = [
  'passed',
  'not_delivered',
  'watch_not_current',
];

/**
 * `policygrant_decision_revision_watch_up`, `policygrant_decision_revision_watch_last_message_age_seconds`,
 * `policygrant_decision_revision_watch_restarts_total{reason}`,
 * `policygrant_decision_revision_watch_messages_total{kind}`, `policygrant_decision_revision_tracked_entries`
 * `policygrant_decision_check_consistency_total{consistency}` and
 * `policygrant_decision_revision_confirmations_total{outcome}`.
 */
export function revisionBarrierMetrics(
  registry: MetricsRegistry,
  gauges: RevisionBarrierGauges,
): RevisionBarrierMetrics {
  const up = gauge(registry, {
    name: 'decision_revision_watch_up',
    help: '1 while the SpiceDB Watch of the revision barrier is current; 0: checks go to the head revision.',
  });
  gauge(registry, {
    name: 'decision_revision_watch_last_message_age_seconds',
    help: 'Seconds since the SpiceDB Watch last delivered a change or checkpoint (-1: none yet).',
    collect() {
      const at = gauges.lastMessageAt();
      this.set(at === undefined ? -1 : (performance.now() - at) / 1000);
    },
  });
  gauge(registry, {
    name: 'decision_revision_tracked_entries',
    help: 'Objects and revisions the revision barrier remembers (bounded by REVISION_BARRIER_MAX_ENTRIES).',
    collect() {
      this.set(gauges.trackedEntries());
    },
  });
  const restarts = counter(registry, {
    name: 'decision_revision_watch_restarts_total',
    help: 'SpiceDB Watch reconnections, by reason: error, ended, unknown_revision (started again from the head).',
    labelNames: ['reason'],
  });
  const messages = counter(registry, {
    name: 'decision_revision_watch_messages_total',
    help: 'Messages the SpiceDB Watch delivered, by kind: change (relationships), schema, checkpoint (nothing changed).',
    labelNames: ['kind'],
  });
  const chosen = counter(registry, {
    name: 'decision_check_consistency_total',
    help: 'Checks by the consistency they were evaluated at: minimize_latency, touched, caller_token, head.',
    labelNames: ['consistency'],
  });
  const confirmations = counter(registry, {
    name: 'decision_revision_confirmations_total',
    help:
      'Answers of GET /watch/passed, by outcome: passed, not_delivered (the Watch did not deliver the ZedToken ' +
      'within the wait), watch_not_current.',
    labelNames: ['outcome'],
  });
  up.set(0);
  for (const reason of RESTART_REASONS) restarts.inc({ reason }, 0);
  for (const kind of MESSAGE_KINDS) messages.inc({ kind }, 0);
  for (const consistency of CONSISTENCY_SOURCES) chosen.inc({ consistency }, 0);
  for (const outcome of CONFIRMATION_OUTCOMES) confirmations.inc({ outcome }, 0);
  return {
    current: (isUp) => up.set(isUp ? 1 : 0),
    restarted: (reason) => restarts.inc({ reason }),
    delivered: (kind) => messages.inc({ kind }),
    chosen: (consistency) => chosen.inc({ consistency }),
    confirmed: (outcome) => confirmations.inc({ outcome }),
  };
}
