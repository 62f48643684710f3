import { zedTokenRevision } from '../spicedb/zed-token.js';

/**
 * The newest revisions the Watch delivered, for the confirmation route (revision-route.ts). The Watch's own order
 * is the only order this service knows, so a replica has passed a write's ZedToken once its Watch delivered that
 * very revision: SpiceDB's Watch names each change by the revision its write returned, and delivers changes in
 * order. Tokens are compared by the revision they name (zed-token.ts: a Watch's token and a write's token of one
 * revision differ in bytes). Bounded: the oldest are forgotten first, and a revision forgotten (or never
 * delivered, e.g. written before the Watch started) is never confirmed.
 */
export class DeliveredRevisions {
  private readonly tokens = new Set<string>();
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly maxEntries: number) {}

  /** The Watch delivered this revision (after the barrier took in what it changed). */
  record(deliveredToken: string): void {
    const token = zedTokenRevision(deliveredToken);
    this.tokens.delete(token);
    this.tokens.add(token);
    if (this.tokens.size > this.maxEntries) {
      const [oldest] = this.tokens;
      if (oldest !== undefined) this.tokens.delete(oldest);
    }
    const waiting = this.waiters.get(token);
    this.waiters.delete(token);
    waiting?.forEach((wake) => wake());
  }

  /** Forgets every token: the Watch started again from the head, on what may be another datastore. */
  reset(): void {
    this.tokens.clear();
  }

  has(token: string): boolean {
    return this.tokens.has(zedTokenRevision(token));
  }

  /** Resolves true once the token is delivered (at once if it was), false after `timeoutMs` or on abort. */
  waitFor(askedToken: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const token = zedTokenRevision(askedToken);
    if (this.tokens.has(token)) return Promise.resolve(true);
    if (timeoutMs <= 0 || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiting = this.waiters.get(token) ?? new Set<() => void>();
      this.waiters.set(token, waiting);
      const finish = (delivered: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abandon);
        waiting.delete(wake);
        if (waiting.size === 0 && this.waiters.get(token) === waiting) this.waiters.delete(token);
        resolve(delivered);
      };
      const wake = () => finish(true);
      const abandon = () => finish(false);
      const timer = setTimeout(abandon, timeoutMs);
      signal?.addEventListener('abort', abandon, { once: true });
      waiting.add(wake);
    });
  }

  /** Tokens waited for now (bounded by the route's callers). */
  get waiting(): number {
    let count = 0;
    for (const waiting of this.waiters.values()) count += waiting.size;
    return count;
  }
}
