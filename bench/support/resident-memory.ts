import { readFileSync } from 'node:fs';

/** The resident set size of a process, in bytes, from /proc/<pid>/status (Linux); fails when it has ended. */
export function residentBytes(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    throw new Error(`process ${pid} has ended`);
  }
  // A zombie (ended, not yet reaped) has no VmRSS line.
  const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kilobytes === undefined) throw new Error(`process ${pid} has ended`);
  return Number(kilobytes) * 1024;
}
