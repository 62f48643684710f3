/** The heap in use after a full garbage collection (node --expose-gc; without it, whatever is in use). */
export function liveHeap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}
