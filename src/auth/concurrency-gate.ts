import pLimit from 'p-limit';

export interface ConcurrencyBound {
  /** Tasks that run at once. */
  concurrency: number;
  /** Tasks that may wait for a slot; one more is refused at once. */
  queue: number;
}

/** Runs a task when a slot is free; throws `busy()` instead of queueing past the bound. */
export type ConcurrencyGate = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * A semaphore with a bounded queue (p-limit does the queueing): expensive work such as scrypt or a
 * TokenReview cannot pile up without bound behind a flood; the excess is refused at once.
 */
export function concurrencyGate(bound: ConcurrencyBound, busy: () => Error): ConcurrencyGate {
  const limit = pLimit(bound.concurrency);
  return (task) => {
    const full = limit.activeCount >= bound.concurrency && limit.pendingCount >= bound.queue;
    return full ? Promise.reject(busy()) : limit(task);
  };
}
