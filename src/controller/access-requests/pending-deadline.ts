import type { AccessRequest } from '../../api/v1alpha1/index.js';

/**
 * When a pending request expires: its creation plus the pending TTL. A request without a creation time (never
 * so from the apiserver) is due at once, so that nothing waits for ever.
 */
export function pendingDeadline(request: Pick<AccessRequest, 'metadata'>, pendingTtlMs: number): number {
  const created = Date.parse(String(request.metadata.creationTimestamp ?? ''));
  return Number.isNaN(created) ? 0 : created + pendingTtlMs;
}

/** Decisions this recent are announced with an Event; older ones were, or their Event has expired anyway. */
export const ANNOUNCE_WINDOW_MS = 60 * 60_000;

/** Whether a decision taken at `decidedAt` is still worth its Event at `now` (the apiserver keeps them 1 h). */
export function worthAnnouncing(decidedAt: string | undefined, now: Date): boolean {
  const at = Date.parse(decidedAt ?? '');
  return !Number.isNaN(at) && now.getTime() - at < ANNOUNCE_WINDOW_MS;
}
