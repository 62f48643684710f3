/** A revision as the Watch delivered it: ZedTokens are opaque, `position` orders them (the stream's order). */
export interface TrackedRevision {
  token: string;
  position: number;
}

export interface RevisionTrackerOptions {
  /** How long a change counts as recent: SpiceDB's quantization window plus a margin. */
  retentionMs: number;
  /** Bound on remembered keys and tokens; past it, everything counts as touched for one retention. */
  maxEntries: number;
  /** A monotonic clock in milliseconds. */
  now?: () => number;
}

interface Entry extends TrackedRevision {
  expiresAt: number;
}

/**
 * Remembers, for one retention, the newest revision that touched each key, and the order of every revision
 * the Watch delivered. Maps keep insertion order and every entry is (re)inserted with the latest expiry, so
 * expired entries are always at the front: pruning is cheap.
 */
export class RevisionTracker {
  private readonly touches = new Map<string, Entry>();
  private readonly revisions = new Map<string, Entry>();
  private readonly retentionMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private latest: TrackedRevision | undefined;
  /** The newest revision that touched any key, until its retention ends. */
  private latestChange: Entry | undefined;
  private everythingTouchedUntil = -Infinity;
  /** When the newest change was recorded, or everything counted as touched: kept past the retention. */
  private lastChangeAt = -Infinity;
  private lastPosition = 0;

  constructor(options: RevisionTrackerOptions) {
    this.retentionMs = options.retentionMs;
    this.maxEntries = options.maxEntries;
    this.now = options.now ?? (() => performance.now());
  }

  /** One Watch message: the revision it brings us to, and the keys its changes touched (none: a checkpoint). */
  record(token: string, touchedKeys: Iterable<string>): void {
    const now = this.now();
    this.prune(now);
    const position = this.revisions.get(token)?.position ?? ++this.lastPosition;
    const entry: Entry = { token, position, expiresAt: now + this.retentionMs };
    refresh(this.revisions, token, entry);
    for (const key of touchedKeys) {
      refresh(this.touches, key, entry);
      this.latestChange = entry;
      this.lastChangeAt = now;
    }
    if (!this.latest || position >= this.latest.position) this.latest = { token, position };
    if (this.touches.size + this.revisions.size > this.maxEntries) this.overflow();
  }

  /** Every key counts as touched, at the newest revision, for one retention from now. */
  touchEverything(): void {
    this.lastChangeAt = this.now();
    this.everythingTouchedUntil = this.lastChangeAt + this.retentionMs;
  }

  /** Forgets everything: the tokens of a datastore that is gone mean nothing to the next one. */
  reset(): void {
    this.touches.clear();
    this.revisions.clear();
    this.latest = undefined;
    this.latestChange = undefined;
    this.everythingTouchedUntil = -Infinity;
    this.lastChangeAt = this.now();
  }

  /** The newest revision within the retention that touched one of the keys. */
  newestTouching(keys: readonly string[]): TrackedRevision | undefined {
    const now = this.now();
    if (now < this.everythingTouchedUntil) return this.latest;
    let newest: Entry | undefined;
    for (const key of keys) {
      const entry = this.touches.get(key);
      if (entry && entry.expiresAt > now && (!newest || entry.position > newest.position)) newest = entry;
    }
    return newest && { token: newest.token, position: newest.position };
  }

  /** The newest revision within the retention that touched any key: what a search over every key must see. */
  newestChange(): TrackedRevision | undefined {
    const now = this.now();
    if (now < this.everythingTouchedUntil) return this.latest;
    const change = this.latestChange;
    return change && change.expiresAt > now ? { token: change.token, position: change.position } : undefined;
  }

  /**
   * Whether the Watch may have delivered a change within the last `ms`: true unless the tracker knows it did not
   * (no change recorded, nothing counted as touched and nothing forgotten since). Unlike the touches, the time
   * of the newest change is kept past the retention: a number, not a key per change.
   */
  changedWithin(ms: number): boolean {
    // A negative time (a clock ahead of this one named its start) tells nothing.
    return ms < 0 || this.now() - ms <= this.lastChangeAt;
  }

  /** Where a token stands in the Watch's order, when the Watch delivered it within the retention. */
  positionOf(token: string): number | undefined {
    const entry = this.revisions.get(token);
    return entry && entry.expiresAt > this.now() ? entry.position : undefined;
  }

  /** The newest revision the Watch delivered. */
  get newest(): TrackedRevision | undefined {
    return this.latest;
  }

  /** Keys and revisions remembered now. */
  get size(): number {
    this.prune(this.now());
    return this.touches.size + this.revisions.size;
  }

  private prune(now: number): void {
    pruneExpired(this.touches, now);
    pruneExpired(this.revisions, now);
  }

  /** A write storm: rather than grow, count everything as touched (never a quantized answer) and start over. */
  private overflow(): void {
    this.touches.clear();
    this.revisions.clear();
    this.touchEverything();
  }
}

function refresh(entries: Map<string, Entry>, key: string, entry: Entry): void {
  entries.delete(key);
  entries.set(key, entry);
}

function pruneExpired(entries: Map<string, Entry>, now: number): void {
  for (const [key, entry] of entries) {
    if (entry.expiresAt > now) return;
    entries.delete(key);
  }
}
