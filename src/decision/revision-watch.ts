import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../observability/logger.js';
import { Backoff } from '../runtime/backoff.js';
import type { RelationshipUpdate, SpiceDBClient, WatchEvent } from '../spicedb/client.js';
import { SpiceDBError } from '../spicedb/errors.js';
import type { DeliveredRevisions } from './delivered-revisions.js';
import { grpcStatusName } from './grpc-status.js';
import { relationshipKeys } from './revision-keys.js';
import type { RevisionTracker } from './revision-tracker.js';

export type WatchRestartReason = 'error' | 'ended' | 'unknown_revision';

export type WatchMessageKind = 'change' | 'schema' | 'checkpoint';

/** What a Watch message brought: a schema change counts as one whether or not relationships came with it. */
export function messageKind(event: WatchEvent): WatchMessageKind {
  if (event.schemaUpdated) return 'schema';
  return event.updates.length > 0 ? 'change' : 'checkpoint';
}

export interface RevisionWatchEvents {
  /** The Watch became current, or stopped being current. */
  current(up: boolean): void;
  restarted(reason: WatchRestartReason): void;
  /** A message arrived: relationship changes, a schema change, or a checkpoint (nothing changed). */
  delivered(kind: WatchMessageKind): void;
}

/**
 * Told what the Watch learns, beyond the tracker: the decision cache forgets what a change may alter, the
 * relationships' expiries follow the updates.
 */
export interface WatchChangeListener {
  /** A change wrote these relationships at this revision; they touch these keys (revision-keys.ts). */
  touched(keys: readonly string[], updates: readonly RelationshipUpdate[], revision: string): void;
  /** What changed is unknown: the Watch stopped being current, started again from the head, or the schema changed. */
  unknown(): void;
  /**
   * What was read before this revision may be stale, and the Watch delivers every change after it: it started
   * from the head (start-up, a revision SpiceDB did not know) or delivered a schema change.
   */
  startedFrom(revision: string): void;
}

export interface RevisionWatchOptions {
  spicedb: Pick<SpiceDBClient, 'watch'>;
  tracker: RevisionTracker;
  /** SpiceDB's head revision, read now: where a Watch starts when it has no revision to resume from. */
  headRevision: () => Promise<string>;
  /** A read at exactly this revision, sent now: fails when SpiceDB cannot serve it (another datastore's). */
  readAt: (token: string) => Promise<unknown>;
  logger: Logger;
  events: RevisionWatchEvents;
  changes?: WatchChangeListener;
  /** Told each revision delivered, after the tracker and the listener; reset when the Watch starts from the head. */
  delivered?: DeliveredRevisions;
  /** Delay before reconnecting, doubling up to maxMs while SpiceDB delivers nothing. */
  retry?: { initialMs: number; maxMs: number };
}

const DEFAULT_RETRY = { initialMs: 100, maxMs: 5_000 };

/**
 * SpiceDB's Watch, from start-up until stop(), feeding the tracker. Reconnects with backoff from the last
 * revision it delivered; when SpiceDB does not know that revision (a memory datastore that restarted, a
 * revision garbage-collected), starts from the head revision and counts everything as touched for one
 * retention, because what changed in between is unknown.
 */
export class RevisionWatch {
  private readonly abort = new AbortController();
  private readonly backoff: Backoff;
  private cursor: string | undefined;
  private running: Promise<void> | undefined;
  private isCurrent = false;
  private lastMessage: number | undefined;
  private lastError = 'not started';
  /** Counts Watch streams (and their ends), so that a late confirmation of an old stream is ignored. */
  private attempts = 0;

  constructor(private readonly options: RevisionWatchOptions) {
    this.backoff = new Backoff({ ...(options.retry ?? DEFAULT_RETRY), jitter: 0 });
  }

  /** Connected: every change not delivered yet happened after this moment's head, or just before (the lag). */
  get current(): boolean {
    return this.isCurrent;
  }

  /** Why the Watch is not current (for readiness and logs). */
  get problem(): string {
    return this.lastError;
  }

  /** performance.now() of the last message, if any. */
  get lastMessageAt(): number | undefined {
    return this.lastMessage;
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const { signal } = this.abort;
    while (!signal.aborted) {
      const delivered = await this.follow();
      this.setCurrent(false);
      if (signal.aborted) return;
      if (delivered) this.backoff.reset();
      await sleep(this.backoff.next(), undefined, { signal }).catch(() => undefined);
    }
  }

  /** One Watch stream, until it ends or fails; true when it delivered something. */
  private async follow(): Promise<boolean> {
    let delivered = false;
    const attempt = ++this.attempts;
    try {
      const start = this.cursor ?? (await this.startFromHead());
      const events = this.options.spicedb.watch({ startCursor: start, signal: this.abort.signal });
      const first = events.next(); // sends the Watch request
      this.confirmLater(attempt, start);
      for (let result = await first; !result.done; result = await events.next()) {
        delivered = true;
        this.setCurrent(true);
        this.apply(result.value);
      }
      if (!this.abort.signal.aborted) this.restarted('ended', 'SpiceDB ended the Watch');
    } catch (error) {
      this.failed(error);
    } finally {
      this.attempts += 1; // a confirmation still in flight no longer counts
    }
    return delivered;
  }

  /**
   * SpiceDB sends nothing on a Watch until something changes, so a quiet Watch cannot show that it reached
   * SpiceDB. A read at exactly the Watch's start revision, answered after the Watch request was sent, can: both
   * travel on the same connection, in order, so SpiceDB had the Watch when it answered the read; and it answers
   * only a revision of its own datastore, which it then accepts as the Watch's start too, so any change after
   * it is on its way. A head revision read would not do: after SpiceDB restarted on an empty datastore, it may
   * answer before SpiceDB refuses the old revision, and checks would meanwhile run at minimize_latency against a
   * datastore whose changes this Watch never delivers. Until then (or a first message), the Watch is not current.
   */
  private confirmLater(attempt: number, start: string): void {
    this.options.readAt(start).then(
      () => {
        if (this.attempts === attempt) this.setCurrent(true);
      },
      () => undefined,
    );
  }

  private async startFromHead(): Promise<string> {
    const head = await this.options.headRevision();
    const { tracker } = this.options;
    tracker.reset();
    this.options.delivered?.reset();
    tracker.record(head, []);
    tracker.touchEverything();
    this.options.changes?.unknown();
    this.options.changes?.startedFrom(head);
    this.cursor = head;
    return head;
  }

  private apply(event: WatchEvent): void {
    const { tracker, events } = this.options;
    this.lastMessage = performance.now();
    events.delivered(messageKind(event));
    const keys = event.updates.flatMap(({ relationship }) => relationshipKeys(relationship));
    tracker.record(event.changesThrough, keys);
    this.options.changes?.touched(keys, event.updates, event.changesThrough);
    // A schema change can change any answer.
    if (event.schemaUpdated) {
      tracker.touchEverything();
      this.options.changes?.unknown();
      this.options.changes?.startedFrom(event.changesThrough);
    }
    this.cursor = event.changesThrough;
    this.options.delivered?.record(event.changesThrough);
  }

  private failed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (isUnknownStart(error)) {
      this.cursor = undefined;
      this.restarted('unknown_revision', message);
    } else {
      this.restarted('error', message);
    }
  }

  private restarted(reason: WatchRestartReason, message: string): void {
    this.lastError = message;
    this.options.events.restarted(reason);
    this.options.logger.warn({ reason, error: message }, 'SpiceDB Watch stopped; reconnecting');
  }

  private setCurrent(up: boolean): void {
    if (this.isCurrent === up) return;
    this.isCurrent = up;
    if (!up) this.options.changes?.unknown();
    this.options.events.current(up);
    if (up) this.options.logger.info('SpiceDB Watch is current');
  }
}

/**
 * SpiceDB refuses a start revision it cannot serve (another datastore instance, garbage-collected, malformed)
 * with INVALID_ARGUMENT or FAILED_PRECONDITION. Starting over from the head is always safe, so any of those does.
 */
function isUnknownStart(error: unknown): boolean {
  if (!(error instanceof SpiceDBError) || error.operation !== 'Watch') return false;
  const code = grpcStatusName(error.code);
  return code === 'INVALID_ARGUMENT' || code === 'FAILED_PRECONDITION';
}
