import { setTimeout } from 'node:timers/promises';

/** Resolves after `ms`; an aborted `signal` rejects it at once (an AbortError), so a stopping caller need not wait. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return setTimeout(ms, undefined, signal ? { signal } : undefined);
}
