import { LRUCache } from 'lru-cache';

/** Most result ids held by one memory (a page holds at most MAX_PAGE_LIMIT of them). */
const MAX_IDS = 50_000;
/** An answer not asked for within this long is dropped: its client stopped paging. */
const TTL_MS = 60_000;

/**
 * What a search read from SpiceDB for the requests that continue it with their tokens: search/resource's page
 * after a full one, search/subject's whole sorted answer. Both were read at the snapshot the token pins (the
 * LookupResources cursor, the LookupSubjects ZedToken), so what is held is what the later request would read
 * itself. Bounded by the ids held and by age; a request that finds nothing (dropped, or sent to another
 * replica) reads from SpiceDB.
 */
export class SearchMemory<T extends object> {
  private readonly held: LRUCache<string, T>;

  /** `ids` counts the result ids of an answer: what the bound is in. */
  constructor(ids: (answer: T) => number) {
    this.held = new LRUCache<string, T>({
      maxSize: MAX_IDS,
      sizeCalculation: (answer) => ids(answer) + 1,
      ttl: TTL_MS,
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
