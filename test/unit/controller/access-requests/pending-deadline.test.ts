import { describe, expect, it } from 'vitest';
import {
  ANNOUNCE_WINDOW_MS,
  pendingDeadline,
  worthAnnouncing,
} from '../../../../src/controller/access-requests/pending-deadline.js';

const created = (creationTimestamp: unknown) => ({ metadata: { creationTimestamp } as never });

describe('pendingDeadline', () => {
  it('is the creation time plus the TTL', () => {
    expect(pendingDeadline(created('2026-01-01T00:00:00Z'), 60_000)).toBe(Date.parse('2026-01-01T00:01:00Z'));
  });

  it('is due at once without a creation time', () => {
    expect(pendingDeadline(created(undefined), 60_000)).toBe(0);
  });
});

describe('worthAnnouncing', () => {
  const now = new Date('2026-01-01T12:00:00Z');

  it('a decision within the window, not one older or without a time', () => {
    expect(worthAnnouncing('2026-01-01T11:59:00Z', now)).toBe(true);
    expect(worthAnnouncing(new Date(now.getTime() - ANNOUNCE_WINDOW_MS).toISOString(), now)).toBe(false);
    expect(worthAnnouncing(undefined, now)).toBe(false);
    expect(worthAnnouncing('yesterday', now)).toBe(false);
  });
});
