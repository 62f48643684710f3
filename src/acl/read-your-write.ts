import { sleep } from '../runtime/timing.js';

/** How often a write looks for itself in the cache. */
const CACHE_POLL_MS = 50;

/**
 * Waits until the informer's cache shows a write (`seen` holds), so that the caller's next read shows it too;
 * after `timeoutMs` (ACL_READ_YOUR_WRITE_TIMEOUT) it stops waiting and the write is answered anyway. True when
 * the cache showed it.
 */
export async function untilCached(seen: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (seen()) return true;
    await sleep(CACHE_POLL_MS);
  }
  return false;
}
