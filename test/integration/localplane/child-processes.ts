import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PIDs of this test process's own children that are alive now (by parent PID, not by name). */
export async function childProcesses(): Promise<number[]> {
  try {
    const { stdout } = await run('pgrep', ['-P', String(process.pid)]);
    return stdout.split('\n').filter(Boolean).map(Number);
  } catch (error) {
    if ((error as { code?: number }).code === 1) return []; // pgrep: nothing matched
    throw error;
  }
}

/** Children alive now that were not alive at `before`, with their command lines, for a failure message. */
export async function childrenStartedSince(before: number[]): Promise<string[]> {
  const added = (await childProcesses()).filter((pid) => !before.includes(pid));
  if (added.length === 0) return [];
  const { stdout } = await run('ps', ['-o', 'pid=,args=', '-p', added.join(',')]);
  return stdout.split('\n').filter(Boolean);
}
