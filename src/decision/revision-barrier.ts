import type { Registry as MetricsRegistry } from 'prom-client';
import type { ReadinessCheck } from '../http/readiness.js';
import type { Logger } from '../observability/logger.js';
import type { CheckPermissionInput, Consistency, SpiceDBClient } from '../spicedb/client.js';
import { SpiceDBError } from '../spicedb/errors.js';
import { chooseConsistency } from './consistency-choice.js';
import type { ConsistencyChoice, ConsistencySource } from './consistency-choice.js';
import { DecisionCache } from './decision-cache.js';
import type { DecisionCacheSettings } from './decision-cache.js';
import { decisionCacheMetrics } from './decision-cache-metrics.js';
import { DeliveredRevisions } from './delivered-revisions.js';
import { coalescedHeadRevision } from './head-revision.js';
import { RelationshipExpiries } from './relationship-expiries.js';
import { CHECKED_RESOURCE, checkKeys } from './revision-keys.js';
import { revisionBarrierMetrics } from './revision-barrier-metrics.js';
import { RevisionTracker } from './revision-tracker.js';
import { RevisionWatch } from './revision-watch.js';
import { SpiceDBLiveness } from './spicedb-liveness.js';

export interface RevisionBarrierSettings {
  /** SpiceDB's --datastore-revision-quantization-interval: how old a minimize_latency snapshot may be. */
  quantizationMs: number;
  /** Added to the window: SpiceDB's max staleness (10% of the interval by default) and delivery delays. */
  marginMs: number;
  /** Bound on remembered objects and revisions. */
  maxEntries: number;
  /**
   * The Watch is trusted (and the decision cache answers) only while SpiceDB answered on its connection within
   * this long (spicedb-liveness.ts): a Watch that stalls without breaking must not pass for current.
   */
  livenessMs: number;
}

export const DEFAULT_REVISION_BARRIER: RevisionBarrierSettings = {
  quantizationMs: 5_000,
  marginMs: 2_000,
  maxEntries: 100_000,
  livenessMs: 1_000,
};

export interface RevisionBarrierOptions {
  spicedb: Pick<SpiceDBClient, 'watch' | 'checkPermission' | 'readRelationships'>;
  /** A check whose answer does not matter: evaluated fully consistent, its checked_at is the head revision. */
  headProbe: CheckPermissionInput;
  settings?: RevisionBarrierSettings;
  /** Decisions remembered until the Watch shows a change that touches them. */
  cache?: DecisionCacheSettings;
  logger: Logger;
  metricsRegistry: MetricsRegistry;
}

/** What a replica answers when asked whether it has passed a ZedToken (revision-route.ts). */
export interface RevisionConfirmation {
  /** The Watch delivered the token, and is current: every check from now on is at least as fresh as it. */
  passed: boolean;
  watchCurrent: boolean;
}

/** How many delivered revisions a replica remembers for confirmations (a token is ~50 bytes). */
const DELIVERED_REVISIONS = 10_000;

export interface ChosenConsistency {
  consistency: Consistency;
  source: ConsistencySource;
}

const MINIMIZE_LATENCY: Consistency = { minimizeLatency: true };

/**
 * The decision service's freshness barrier (docs/revision-barrier.md, "Freshness"): a check whose resource
 * or subject changed within SpiceDB's quantization window is evaluated at least as fresh as that change, other
 * checks at minimize_latency; while the Watch is not current, every check is evaluated at least as fresh as the
 * head revision read after it arrived (or fails closed when SpiceDB cannot tell it).
 */
export class RevisionBarrier {
  /** Decisions the Watch keeps fresh; the check evaluator asks it before SpiceDB. */
  readonly decisions: DecisionCache;
  private readonly tracker: RevisionTracker;
  private readonly watch: RevisionWatch;
  private readonly delivered = new DeliveredRevisions(DELIVERED_REVISIONS);
  private readonly expiries: RelationshipExpiries;
  private readonly liveness: SpiceDBLiveness;
  private readonly headRevision: () => Promise<string>;
  private readonly metrics: ReturnType<typeof revisionBarrierMetrics>;

  constructor(options: RevisionBarrierOptions) {
    const settings = options.settings ?? DEFAULT_REVISION_BARRIER;
    this.tracker = new RevisionTracker({
      retentionMs: settings.quantizationMs + settings.marginMs,
      maxEntries: settings.maxEntries,
    });
    this.headRevision = coalescedHeadRevision(() => readHeadRevision(options.spicedb, options.headProbe));
    this.metrics = revisionBarrierMetrics(options.metricsRegistry, {
      lastMessageAt: () => this.watch.lastMessageAt,
      trackedEntries: () => this.tracker.size,
    });
    const { spicedb } = options;
    this.expiries = new RelationshipExpiries({
      read: (revision) =>
        spicedb.readRelationships(
          { resourceType: CHECKED_RESOURCE },
          { consistency: { atLeastAsFresh: revision } },
        ),
      graceMs: settings.quantizationMs + settings.marginMs,
      logger: options.logger,
    });
    this.liveness = new SpiceDBLiveness({
      probe: () => spicedb.checkPermission({ ...options.headProbe, consistency: MINIMIZE_LATENCY }),
      windowMs: settings.livenessMs,
      lastWatchMessageAt: () => this.watch.lastMessageAt,
    });
    this.decisions = new DecisionCache({
      ...(options.cache ? { settings: options.cache } : {}),
      trustworthy: () => this.watchTrusted(),
      // Until the expiries are read, an allow lives no longer than SpiceDB's own snapshot may lag an expiry.
      allowBoundMs: ({ resource }) =>
        this.expiries.untilEarliestExpiry(resource.type, resource.id) ?? settings.quantizationMs,
      events: decisionCacheMetrics(options.metricsRegistry, {
        entries: () => this.decisions.size,
        expiries: this.expiries,
      }),
    });
    this.watch = new RevisionWatch({
      spicedb: options.spicedb,
      tracker: this.tracker,
      headRevision: this.headRevision,
      readAt: (token) =>
        options.spicedb.checkPermission({ ...options.headProbe, consistency: { atExactSnapshot: token } }),
      logger: options.logger,
      events: this.metrics,
      delivered: this.delivered,
      changes: {
        touched: (keys, updates, revision) => {
          this.expiries.apply(updates, revision);
          this.decisions.changed(keys);
        },
        unknown: () => this.decisions.dropAll(),
        startedFrom: (revision) => this.expiries.reloadFrom(revision),
      },
    });
  }

  start(): void {
    this.watch.start();
    this.liveness.start();
  }

  stop(): Promise<void> {
    this.liveness.stop();
    this.expiries.stop();
    return this.watch.stop();
  }

  /**
   * The Watch is current and SpiceDB answered on its connection within the liveness window: a change it has
   * not delivered is not stuck behind a stalled connection.
   */
  private watchTrusted(): boolean {
    return this.watch.current && this.liveness.recent();
  }

  /** How to evaluate a check of these SpiceDB objects; reads the head revision when it has to (SpiceDBError). */
  async consistencyFor(
    query: Pick<CheckPermissionInput, 'resource' | 'subject'>,
    callerToken: string | undefined,
  ): Promise<ChosenConsistency> {
    return this.chosen(
      chooseConsistency({
        watchCurrent: this.watchTrusted(),
        touched: this.tracker.newestTouching(checkKeys(query)),
        callerToken,
        callerPosition: callerToken === undefined ? undefined : this.tracker.positionOf(callerToken),
      }),
    );
  }

  /**
   * How to evaluate a search (LookupResources, LookupSubjects): its answer may hang on any key, so at least as
   * fresh as the newest recent change of all, or the head revision while the Watch is not trusted.
   */
  searchConsistency(): Promise<ChosenConsistency> {
    return this.chosen(
      chooseConsistency({
        watchCurrent: this.watchTrusted(),
        touched: this.tracker.newestChange(),
        callerToken: undefined,
        callerPosition: undefined,
      }),
    );
  }

  /**
   * Whether a search's snapshot read `ms` ago still holds everything the Watch knows: the Watch is trusted and
   * delivered no change since (nor started again). When it is not so, a later page confirms its results with checks (authzen-search).
   */
  unchangedFor(ms: number): boolean {
    return this.watchTrusted() && !this.tracker.changedWithin(ms);
  }

  private async chosen(choice: ConsistencyChoice): Promise<ChosenConsistency> {
    this.metrics.chosen(choice.source);
    switch (choice.source) {
      case 'minimize_latency':
        return { consistency: MINIMIZE_LATENCY, source: choice.source };
      case 'head':
        return { consistency: { atLeastAsFresh: await this.headRevision() }, source: choice.source };
      default:
        return { consistency: { atLeastAsFresh: choice.token }, source: choice.source };
    }
  }

  /**
   * Whether this replica has passed a write's ZedToken, waiting up to `waitMs` for its Watch to deliver it: only
   * a token the Watch delivered counts (never one it may deliver later), and only while the Watch is trusted (a
   * replica whose Watch is down or stalled has passed nothing). What "acknowledged" rests on across replicas
   * (docs/revision-barrier.md, "Confirming a revision").
   */
  async confirm(token: string, waitMs: number, signal?: AbortSignal): Promise<RevisionConfirmation> {
    const delivered = await this.delivered.waitFor(token, waitMs, signal);
    const watchCurrent = this.watchTrusted();
    const passed = delivered && watchCurrent;
    this.metrics.confirmed(passed ? 'passed' : watchCurrent ? 'not_delivered' : 'watch_not_current');
    return { passed, watchCurrent };
  }

  /** Ready only while the Watch is current: `spicedb-watch` names it in the 503. */
  readiness(): ReadinessCheck {
    return {
      name: 'spicedb-watch',
      check: () =>
        this.watch.current
          ? Promise.resolve()
          : Promise.reject(new Error(`SpiceDB Watch not current: ${this.watch.problem}`)),
    };
  }
}

/**
 * The head revision as the checked_at of a fully consistent check. Only its revision is used: the checks
 * themselves run at_least_as_fresh it, never fully consistent (see check-evaluator.ts).
 */
async function readHeadRevision(
  spicedb: Pick<SpiceDBClient, 'checkPermission'>,
  probe: CheckPermissionInput,
): Promise<string> {
  const { checkedAt } = await spicedb.checkPermission({ ...probe, consistency: { fullyConsistent: true } });
  if (!checkedAt) throw new SpiceDBError('CheckPermission', undefined, 'answered without checked_at');
  return checkedAt;
}
