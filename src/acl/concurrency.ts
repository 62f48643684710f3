import pLimit from 'p-limit';

/**
 * Runs `task` over `items` with at most `limit` running at once and waits for all of them, like
 * Promise.allSettled: one failure does not stop the others (a request must know everything it created).
 */
export function settleAll<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const limited = pLimit(limit);
  return Promise.allSettled(items.map((item, index) => limited(() => task(item, index))));
}

/** The values, or the first failure (after every task has ended). */
export function valuesOrThrow<R>(results: readonly PromiseSettledResult<R>[]): R[] {
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((result) => (result as PromiseFulfilledResult<R>).value);
}
