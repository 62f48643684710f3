import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../observability/logger.js';
import { Backoff } from '../runtime/backoff.js';
import type { Relationship, RelationshipPage, RelationshipUpdate } from '../spicedb/client.js';
import { CHECKED_RESOURCE } from './revision-keys.js';

/** Reads the checked resources' relationships at a snapshot at least as fresh as `revision`, page by page. */
export type ResourceRelationshipsReader = (revision: string) => AsyncIterable<RelationshipPage>;

export interface RelationshipExpiriesOptions {
  read: ResourceRelationshipsReader;
  /**
   * How long past an expiry SpiceDB may still honour the relationship (a quantized snapshot, clocks apart): an
   * allow checked within it is not remembered.
   */
  graceMs: number;
  logger: Logger;
  /** Delay before reading again after a failed read, doubling up to maxMs. */
  retry?: { initialMs: number; maxMs: number };
  /** The expiries are never read again only to shed stale ones while there are at most this many. */
  rereadFloor?: number;
  /** Wall-clock milliseconds: expiries are SpiceDB's timestamps. */
  now?: () => number;
}

const DEFAULT_RETRY = { initialMs: 500, maxMs: 10_000 };
/** Below this many, stale expiries cost less memory (at most a few MB) than reading every relationship again. */
const DEFAULT_REREAD_FLOOR = 10_000;

/**
 * The expiries of the checked resources' relationships (schema.zed: a grant's consumer and a delegation expire
 * with it, nothing else does), so that an allow is remembered until the earliest of them on its resource and no
 * longer: SpiceDB stops honouring a relationship at its expiry without a change on the Watch.
 *
 * Known once a snapshot was read after the Watch started (start-up, a start from the head revision, a schema
 * change), and kept by the Watch's updates, which are added as they come, during the read too. Until the read
 * is done (`known` false), the cache falls back to a bound of its own.
 *
 * Only the expiry times are kept, per resource, not which relationship each belongs to: an expiry stays until it
 * is past, even if its relationship is deleted or renewed meanwhile. That errs on the safe side (an allow on
 * that item ends at an expiry that no longer applies, and is asked again), and it keeps the memory to a number
 * per expiring relationship, where identities would cost hundreds of bytes each. Writing the same expiry again
 * (the controller's resync) adds nothing. What it costs is that stale expiries pile up (renewed grants, deleted
 * items, items never checked again), so once the expiries have grown to twice what the last read found (and past
 * a floor), they are read again from SpiceDB, which holds only the live ones.
 */
export class RelationshipExpiries {
  /** Resource id → the expiries (wall-clock ms) on it, ascending, without repeats. */
  private readonly byResource = new Map<string, number[]>();
  /** Expiries in byResource, kept rather than summed: apply() compares it on every Watch change. */
  private count = 0;
  /** How many there were when the last read finished: what SpiceDB held then, with the Watch's updates. */
  private countAfterRead = 0;
  private loaded = false;
  private loading: AbortController | undefined;
  private readonly retry: { initialMs: number; maxMs: number };
  private readonly rereadFloor: number;
  private readonly now: () => number;

  constructor(private readonly options: RelationshipExpiriesOptions) {
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.rereadFloor = options.rereadFloor ?? DEFAULT_REREAD_FLOOR;
    this.now = options.now ?? Date.now;
  }

  /** Whether every expiry on the checked resources is known. */
  get known(): boolean {
    return this.loaded;
  }

  /** Expiries remembered (for the gauge). */
  get size(): number {
    return this.count;
  }

  /**
   * Milliseconds until the earliest expiry on this resource: 0 when one passed within the grace, Infinity when
   * there is none, undefined while the expiries are not known. Forgets expiries past the grace: an expired
   * relationship changes nothing more until it is written again (a Watch update).
   */
  untilEarliestExpiry(resourceType: string, resourceId: string): number | undefined {
    if (!this.known) return undefined;
    if (resourceType !== CHECKED_RESOURCE) return Infinity;
    const expiries = this.byResource.get(resourceId);
    if (!expiries) return Infinity;
    const now = this.now();
    const past = expiries.findIndex((expiresAt) => expiresAt + this.options.graceMs > now);
    if (past === -1) {
      this.byResource.delete(resourceId);
      this.count -= expiries.length;
      return Infinity;
    }
    if (past > 0) {
      expiries.splice(0, past);
      this.count -= past;
    }
    return Math.max(0, (expiries[0] as number) - now);
  }

  /** What was known before `revision` is not: read a snapshot at least as fresh (retried until it succeeds). */
  reloadFrom(revision: string): void {
    this.loading?.abort();
    this.byResource.clear();
    this.count = 0;
    this.loaded = false;
    const loading = new AbortController();
    this.loading = loading;
    void this.loadUntilDone(revision, loading.signal);
  }

  /**
   * Relationship updates the Watch delivered at `revision`: each touch with an expiry adds it (deletes change
   * nothing). When that leaves twice as many expiries as the last read found, they are read again at least as
   * fresh as `revision`: every change up to it is in that snapshot, every later one comes through here.
   */
  apply(updates: readonly RelationshipUpdate[], revision: string): void {
    for (const { operation, relationship } of updates) if (operation === 'touch') this.add(relationship);
    if (this.loaded && this.count > Math.max(this.rereadFloor, 2 * this.countAfterRead)) {
      this.options.logger.info(
        { expiries: this.count, afterLastRead: this.countAfterRead },
        'expiries of relationships grew to twice what the last read found; reading them again',
      );
      this.reloadFrom(revision);
    }
  }

  stop(): void {
    this.loading?.abort();
  }

  private async loadUntilDone(revision: string, signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ ...this.retry, jitter: 0 });
    while (!signal.aborted) {
      try {
        await this.readSnapshot(revision, signal);
        if (signal.aborted) return;
        this.loaded = true;
        this.countAfterRead = this.count;
        this.loading = undefined;
        return;
      } catch (error) {
        if (signal.aborted) return;
        this.options.logger.warn(
          { error: error instanceof Error ? error.message : String(error) },
          'reading the expiries of relationships failed; remembered allows stay short until it succeeds',
        );
        await sleep(backoff.next(), undefined, { signal }).catch(() => undefined);
      }
    }
  }

  /** Adds the snapshot's expiries; a read that fails halfway leaves more than there are, never fewer. */
  private async readSnapshot(revision: string, signal: AbortSignal): Promise<void> {
    for await (const page of this.options.read(revision)) {
      if (signal.aborted) return;
      for (const relationship of page.relationships) this.add(relationship);
    }
  }

  private add({ resource, expiresAt }: Relationship): void {
    if (!expiresAt || resource.type !== CHECKED_RESOURCE) return;
    const time = expiresAt.getTime();
    // Past the grace it bounds nothing any more (untilEarliestExpiry would forget it).
    if (time + this.options.graceMs <= this.now()) return;
    const expiries = this.byResource.get(resource.id);
    if (!expiries) {
      this.byResource.set(resource.id, [time]);
      this.count += 1;
      return;
    }
    const at = sortedIndex(expiries, time);
    if (expiries[at] === time) return;
    expiries.splice(at, 0, time);
    this.count += 1;
  }
}

/** Where `value` is, or would go, in the ascending `values`. */
function sortedIndex(values: readonly number[], value: number): number {
  let [low, high] = [0, values.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((values[middle] as number) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
