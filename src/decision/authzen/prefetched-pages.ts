import { LRUCache } from 'lru-cache';
import type { LookupResourcesPage } from '../../spicedb/client.js';

/** Most result ids held over every prefetched page (a page holds at most MAX_PAGE_LIMIT of them). */
const MAX_IDS = 50_000;
/** A page not asked for within this long is dropped: its client stopped paging. */
const TTL_MS = 60_000;

/**
 * The pages search/resource read ahead of its clients. A full page reads the next one to know whether it is
 * the last, and keeps it here for the request that continues with its token: a page read at a cursor is what
 * that request would read (the cursor pins SpiceDB's revision and arguments), so it is served once, then
 * dropped. Bounded by the ids held and by age; a request that finds nothing (dropped, or sent to another
 * replica) reads its page itself.
 */
export class PrefetchedPages {
  private readonly pages = new LRUCache<string, LookupResourcesPage>({
    maxSize: MAX_IDS,
    sizeCalculation: (page) => page.resourceIds.length + 1,
    ttl: TTL_MS,
  });

  keep(token: string, page: LookupResourcesPage): void {
    this.pages.set(token, page);
  }

  /** The page kept for `token`, removed; undefined when none is. */
  take(token: string): LookupResourcesPage | undefined {
    const page = this.pages.get(token);
    if (page !== undefined) this.pages.delete(token);
    return page;
  }
}
