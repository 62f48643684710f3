/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** apimachinery's wait.Jitter: a duration between `ms` and `ms * (1 + maxFactor)`. */
export function jittered(ms: number, maxFactor: number): number {
  return ms + Math.random() * maxFactor * ms;
}

/** Monotonic milliseconds, for durations (not wall-clock time). */
export const monotonicNow = (): number => performance.now();
