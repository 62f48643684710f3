import { LRUCache } from 'lru-cache';

/** What SpiceDB answered to one check: whether it allowed, and the revision it evaluated it at. */
export interface Decision {
  allowed: boolean;
  checkedAt?: string;
}

export interface DecisionCacheSettings {
  /** Off: every check goes to SpiceDB (identical checks in flight still share one call). */
  enabled: boolean;
  /** Bound on remembered decisions; past it the least recently used goes. */
  maxEntries: number;
  /**
   * Longest an allow is served from memory. The Watch purges an allow as soon as a change touches it, and an
   * allow ends earlier at the earliest expiry on its resource (`allowBoundMs`): this bounds the rest.
   */
  allowTtlMs: number;
  /** Longest a deny is served from memory. */
  denyTtlMs: number;
}

export const DEFAULT_DECISION_CACHE: DecisionCacheSettings = {
  enabled: true,
  maxEntries: 10_000,
  allowTtlMs: 60_000,
  denyTtlMs: 1_000,
};

export type CacheLookup = 'hit' | 'miss' | 'shared';
export type CacheEviction = 'capacity' | 'expired' | 'changed' | 'dropped';

export interface DecisionCacheEvents {
  /** A check was answered from memory (`hit`), joined an identical check in flight (`shared`), or asked SpiceDB. */
  looked(outcome: CacheLookup): void;
  evicted(reason: CacheEviction, count: number): void;
}

export interface DecisionCacheOptions {
  settings?: DecisionCacheSettings;
  /**
   * False while the revision barrier's Watch is not current, or SpiceDB has been quiet past the liveness
   * window: nothing is served from memory or shared then.
   */
  trustworthy: () => boolean;
  /**
   * The longest an allow of this check may be remembered besides `allowTtlMs`: until the earliest expiry of a
   * relationship it may rest on (SpiceDB applies an expiry without a change on the Watch). None when absent.
   */
  allowBoundMs?: (check: CheckIdentity) => number;
  events?: DecisionCacheEvents;
  /** A monotonic clock in milliseconds. */
  now?: () => number;
}

export interface CheckIdentity {
  /** The whole check and its consistency requirement: equal ids get equal answers. */
  id: string;
  /** The revision keys of the check (revision-keys.ts): a change touching one of them may change the answer. */
  keys: readonly string[];
  /** The checked SpiceDB object: the expiries an allow rests on are its relationships'. */
  resource: { type: string; id: string };
  /** Only checks without a caller's token are remembered; any check may share an identical one in flight. */
  rememberable: boolean;
}

interface Entry {
  decision: Decision;
  keys: readonly string[];
  expiresAt: number;
}

interface Flight {
  decision: Promise<Decision>;
  keys: readonly string[];
}

const NO_EVENTS: DecisionCacheEvents = { looked: () => undefined, evicted: () => undefined };

/**
 * Decisions remembered until a change could alter them, and identical checks in flight sharing one SpiceDB
 * call. A decision is remembered only when no change touching its keys reached the Watch between the moment
 * its check was sent (after the revision barrier chose its consistency) and its answer, and it is forgotten
 * as soon as one does: so it never answers older than a change the revision barrier has seen. While the Watch
 * is not current, or on any event that makes what changed unknown (`dropAll`), nothing is served from memory.
 */
export class DecisionCache {
  /** Remembered decisions, least recently used first; past `maxEntries`, lru-cache evicts the first. */
  private readonly entries: LRUCache<string, Entry>;
  private readonly flights = new Map<string, Flight>();
  /** Revision key → ids of the checks remembered or in flight that it touches. */
  private readonly byKey = new Map<string, Set<string>>();
  private readonly settings: DecisionCacheSettings;
  private readonly trustworthy: () => boolean;
  private readonly allowBoundMs: (check: CheckIdentity) => number;
  private readonly events: DecisionCacheEvents;
  private readonly now: () => number;

  constructor(options: DecisionCacheOptions) {
    this.settings = options.settings ?? DEFAULT_DECISION_CACHE;
    this.trustworthy = options.trustworthy;
    this.allowBoundMs = options.allowBoundMs ?? (() => Infinity);
    this.events = options.events ?? NO_EVENTS;
    this.now = options.now ?? (() => performance.now());
    this.entries = new LRUCache<string, Entry>({
      max: Math.max(1, this.settings.maxEntries),
      dispose: (entry, id, reason) => {
        if (reason === 'evict') this.evicted(id, entry.keys);
      },
    });
  }

  /**
   * The decision of `check`: remembered, shared with the identical check in flight, or `ask`ed. `ask` must choose
   * the check's consistency before its first await, so that a change seen later overtakes it.
   */
  decide(check: CheckIdentity, ask: () => Promise<Decision>): Promise<Decision> {
    if (!this.trustworthy()) return ask();
    const remembered = check.rememberable ? this.remembered(check.id) : undefined;
    if (remembered) {
      this.events.looked('hit');
      return Promise.resolve(remembered);
    }
    const flight = this.flights.get(check.id);
    if (flight) {
      this.events.looked('shared');
      return flight.decision;
    }
    this.events.looked('miss');
    return this.fly(check, ask);
  }

  /** A change touched these keys: forget every decision on them and let no check in flight be remembered. */
  changed(keys: Iterable<string>): void {
    let forgotten = 0;
    for (const key of keys) {
      const ids = this.byKey.get(key);
      if (!ids) continue;
      for (const id of [...ids]) if (this.forget(id)) forgotten += 1;
    }
    if (forgotten > 0) this.events.evicted('changed', forgotten);
  }

  /** What changed is unknown (Watch restarted or not current, schema changed): forget everything. */
  dropAll(): void {
    const forgotten = this.entries.size;
    this.entries.clear();
    this.flights.clear();
    this.byKey.clear();
    if (forgotten > 0) this.events.evicted('dropped', forgotten);
  }

  /** Decisions remembered now. */
  get size(): number {
    return this.entries.size;
  }

  /** The decision remembered for `id`, now the most recently used, unless it has expired. */
  private remembered(id: string): Decision | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.remove(id, entry.keys);
      this.events.evicted('expired', 1);
      return undefined;
    }
    return entry.decision;
  }

  private fly(check: CheckIdentity, ask: () => Promise<Decision>): Promise<Decision> {
    const flight: Flight = { decision: ask(), keys: check.keys };
    this.flights.set(check.id, flight);
    this.index(check.id, check.keys);
    // A flight that is no longer the current one was overtaken: a change touched its keys (or the cache was
    // dropped) after it was sent, so its answer may predate it; forget or dropAll took it out of the index.
    const landed = (decision?: Decision) => {
      if (this.flights.get(check.id) !== flight) return;
      this.flights.delete(check.id);
      // Remembered, the decision stays indexed under the flight's keys; otherwise it leaves the index.
      const remembered = decision !== undefined && check.rememberable && this.trustworthy();
      if (remembered && this.remember(check, decision)) return;
      if (!this.entries.has(check.id)) this.unindex(check.id, check.keys);
    };
    flight.decision.then(landed, () => landed());
    return flight.decision;
  }

  /** Remembers the decision of a check that is indexed already; false when it is not to be remembered. */
  private remember(check: CheckIdentity, decision: Decision): boolean {
    const { enabled, maxEntries, allowTtlMs, denyTtlMs } = this.settings;
    if (!enabled || maxEntries < 1) return false;
    const ttl = decision.allowed ? Math.min(allowTtlMs, this.allowBoundMs(check)) : denyTtlMs;
    if (ttl <= 0) return false;
    this.entries.set(check.id, { decision, keys: check.keys, expiresAt: this.now() + ttl });
    return true;
  }

  /** lru-cache dropped the least recently used decision to stay within `maxEntries`. */
  private evicted(id: string, keys: readonly string[]): void {
    this.unindexUnlessInFlight(id, keys);
    this.events.evicted('capacity', 1);
  }

  /** Forgets a check's decision and overtakes its flight; true when a decision was forgotten. */
  private forget(id: string): boolean {
    const flight = this.flights.get(id);
    if (flight) this.flights.delete(id);
    const entry = this.entries.get(id);
    if (entry) this.entries.delete(id);
    const keys = entry?.keys ?? flight?.keys;
    if (keys) this.unindex(id, keys);
    return entry !== undefined;
  }

  private remove(id: string, keys: readonly string[]): void {
    this.entries.delete(id);
    this.unindexUnlessInFlight(id, keys);
  }

  /** A check in flight stays indexed: a change must still overtake it. */
  private unindexUnlessInFlight(id: string, keys: readonly string[]): void {
    if (!this.flights.has(id)) this.unindex(id, keys);
  }

  private index(id: string, keys: readonly string[]): void {
    for (const key of keys) {
      let ids = this.byKey.get(key);
      if (!ids) this.byKey.set(key, (ids = new Set()));
      ids.add(id);
    }
  }

  private unindex(id: string, keys: readonly string[]): void {
    for (const key of keys) {
      const ids = this.byKey.get(key);
      ids?.delete(id);
      if (ids?.size === 0) this.byKey.delete(key);
    }
  }
}
