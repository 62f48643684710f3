/** What one kind of operation did since the counts were last taken. */
export interface OperationCounts {
  ok: number;
  failed: number;
  /** Due while `maxInFlight` were still waiting: never sent (the system fell behind the schedule). */
  skipped: number;
  latenciesMs: number[];
}

export interface OpenLoop {
  /** The counts since the last call, and zero again. */
  takeCounts(): OperationCounts;
  /** The first few distinct failure messages with how often each came. */
  failures(): Map<string, number>;
  /** No new operations; resolves once those in flight have answered. */
  stop(): Promise<void>;
}

const TICK_MS = 5;
const FAILURE_KINDS_KEPT = 10;

/**
 * Starts `operation` `rate` times a second on a fixed schedule, whether earlier ones have answered or not (an
 * open loop: a slow system gets the same load, not less), at most `maxInFlight` at once. An operation that
 * resolves false did nothing (counted neither ok nor failed); one that throws failed.
 */
export function openLoop(rate: number, maxInFlight: number, operation: () => Promise<boolean>): OpenLoop {
  let counts = emptyCounts();
  const failures = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  let issued = 0;
  const run = async () => {
    const sent = performance.now();
    try {
      if (await operation()) {
        counts.ok += 1;
        counts.latenciesMs.push(performance.now() - sent);
      }
    } catch (error) {
      counts.failed += 1;
      const message = error instanceof Error ? error.message : String(error);
      if (failures.has(message) || failures.size < FAILURE_KINDS_KEPT)
        failures.set(message, (failures.get(message) ?? 0) + 1);
    }
  };
  const tick = () => {
    const due = Math.floor(((performance.now() - started) / 1_000) * rate);
    for (; issued < due; issued++) {
      if (inFlight.size >= maxInFlight) {
        counts.skipped += 1;
        continue;
      }
      const running = run().finally(() => inFlight.delete(running));
      inFlight.add(running);
    }
  };
  const timer = rate > 0 ? setInterval(tick, TICK_MS) : undefined;
  return {
    takeCounts() {
      const taken = counts;
      counts = emptyCounts();
      return taken;
    },
    failures: () => failures,
    async stop() {
      clearInterval(timer);
      await Promise.allSettled([...inFlight]);
    },
  };
}

function emptyCounts(): OperationCounts {
  return { ok: 0, failed: 0, skipped: 0, latenciesMs: [] };
}
