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
