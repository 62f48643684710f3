import { readdirSync, readFileSync } from 'node:fs';

// CPU time from /proc (Linux): the benchmarks charge each process's work to what it measured.

const CLOCK_TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat after the command name (which is in parentheses and may hold spaces). */
function statFields(pid: number | string): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ');
  } catch {
    return undefined;
  }
}

/** User and system CPU time of a process, in milliseconds; 0 where /proc is missing or it has ended. */
export function processCpuMs(pid: number): number {
  const fields = statFields(pid);
  if (fields === undefined) return 0;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/**
 * A process and its live children (PostgreSQL serves each connection from a child of its own). A child's time
 * moves to its parent's only when it ends, so both are read while they live.
 */
export function processTreeCpuMs(pid: number): number {
  const children = readdirSync('/proc').filter(
    (entry) => /^\d+$/.test(entry) && statFields(entry)?.[1] === String(pid),
  );
  return children.reduce((sum, child) => sum + processTreeCpuMs(Number(child)), processCpuMs(pid));
}

/** All cores together, from /proc/stat: time in all states, and busy (not idle, not waiting for I/O). */
export function machineCpuMs(): { totalMs: number; busyMs: number } {
  const ticks =
    readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.split(/\s+/).slice(1, 9).map(Number) ?? [];
  const total = ticks.reduce((sum, value) => sum + value, 0);
  const busy = total - (ticks[3] ?? 0) - (ticks[4] ?? 0);
  return { totalMs: (total * 1000) / CLOCK_TICKS_PER_SECOND, busyMs: (busy * 1000) / CLOCK_TICKS_PER_SECOND };
}
