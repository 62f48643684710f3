import { LRUCache } from 'lru-cache';

/** Most bytes held by one cache: about 800,000 UUID-sized search/subject results. */
const MAX_BYTES = 32 * 1024 * 1024;
/** An answer not asked for within this long is dropped: its client stopped paging. */
const TTL_MS = 60_000;

/**
 * A cache of search answers: what a search read from SpiceDB for the requests that continue it with their
 * tokens (search/resource's page after a full one, search/subject's whole sorted answer). Both were read at the
 * snapshot the token pins (the LookupResources cursor, the LookupSubjects ZedToken), so what is held is what the
 * later request would read itself. Bounded by bytes and by the time since an answer was last asked for; an
 * answer larger than the bound is not held. A request that finds nothing (dropped, or sent to another replica)
 * reads from SpiceDB.
 */
export class SearchAnswerCache<T extends object> {
  private readonly held: LRUCache<string, T>;

  /** `bytes` is what holding an answer costs: what the bound is in. */
  constructor(bytes: (answer: T) => number) {
    this.held = new LRUCache<string, T>({
      maxSize: MAX_BYTES,
      sizeCalculation: (answer) => Math.max(1, bytes(answer)),
      ttl: TTL_MS,
      updateAgeOnGet: true,
    });
  }

  keep(key: string, answer: T): void {
    this.held.set(key, answer);
  }

  get(key: string): T | undefined {
    return this.held.get(key);
  }

  /** The answer held for `key`, no longer held; undefined when none is. */
  take(key: string): T | undefined {
    const answer = this.held.get(key);
    if (answer !== undefined) this.held.delete(key);
    return answer;
  }
}
