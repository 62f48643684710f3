import pLimit from 'p-limit';

export interface ConcurrencyBound {
  /** Tasks that run at once. */
  concurrency: number;
  /** Tasks that may wait for a slot; one more is refused at once. */
  queue: number;
}

/**
 * Runs a task when a slot is free; throws `busy()` instead of queueing past the bound, or past the share of
 * the task's `key` when the gate has shares.
 */
export type ConcurrencyGate = <T>(task: () => Promise<T>, key?: string) => Promise<T>;

/**
 * A semaphore with a bounded queue (p-limit does the queueing): expensive work such as scrypt or a
 * TokenReview cannot pile up without bound behind a flood; the excess is refused at once.
 *
 * With `share`, the tasks of one key (a client address) hold at most that many of the gate's places, running
 * and waiting together: one key alone cannot fill the queue every other key waits in. A task without a key
 * has no share.
 */
export function concurrencyGate(
  bound: ConcurrencyBound,
  busy: () => Error,
  share = Number.POSITIVE_INFINITY,
): ConcurrencyGate {
  const limit = pLimit(bound.concurrency);
  /** Places held per key; a key holding none has no entry, so the map is bounded by the gate's places. */
  const held = new Map<string, number>();
  const release = (key: string) => {
    const left = (held.get(key) ?? 1) - 1;
    if (left === 0) held.delete(key);
    else held.set(key, left);
  };
  return (task, key) => {
    const full = limit.activeCount >= bound.concurrency && limit.pendingCount >= bound.queue;
    if (full || (key !== undefined && (held.get(key) ?? 0) >= share)) return Promise.reject(busy());
    if (key === undefined) return limit(task);
    held.set(key, (held.get(key) ?? 0) + 1);
    return limit(task).finally(() => release(key));
  };
}

/** A quarter of the gate's places (at least one): four keys at their share together are needed to fill it. */
export function shareOf({ concurrency, queue }: ConcurrencyBound): number {
  return Math.max(1, Math.floor((concurrency + queue) / 4));
}
