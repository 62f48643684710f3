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

/**
 * A signal that aborts when `parent` does or after `ms`. Call `dispose` when done: unlike
 * AbortSignal.any, nothing stays attached to a long-lived parent (a lease renewed every 2 s for months).
 */
export function linkedTimeout(
  parent: AbortSignal | undefined,
  ms: number,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(parent?.reason);
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${Math.round(ms)} ms`, 'TimeoutError')),
    Math.max(1, ms),
  );
  if (parent?.aborted) {
    onAbort();
  }
  parent?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onAbort);
    },
  };
}
