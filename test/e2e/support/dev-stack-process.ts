import { execFile } from 'node:child_process';
import { stat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../../dev/localplane/repo-root.js';
import { startProcess, withinTime, type ManagedProcess } from '../../../dev/localplane/managed-process.js';
import { readLogTail } from '../../../dev/localplane/log-tail.js';
import { parseStateFile, type DevStackEnv } from '../../../dev/stack/state-file.js';
import { until } from '../../../dev/wait/until.js';

const run = promisify(execFile);

export interface DevStackPorts {
  acl: number;
  decision: number;
  controller: number;
}

export interface DevStackProcess {
  stateDir: string;
  envFile: string;
  /** `npm start`'s entrypoint, leader of its own process group: everything the stack starts is in it. */
  process: ManagedProcess;
  /**
   * Sends a signal, as Ctrl-C (SIGINT) or a crash (SIGKILL) would, and resolves with the exit once the process
   * ends; one that does not end within `timeoutMs` is killed and the call fails.
   */
  signal(signal: NodeJS.Signals, timeoutMs?: number): Promise<number | string>;
}

/**
 * Starts the development stack exactly as a developer does (`npm start`'s entrypoint), in `stateDir`, on the
 * given ports (free ones when 0), with `env` added to its environment. Its output goes to `dev-stack.log` in
 * the state folder.
 */
export function spawnDevStack(
  stateDir: string,
  ports: DevStackPorts | 0 = 0,
  env: NodeJS.ProcessEnv = {},
): DevStackProcess {
  const process = startProcess({
    name: 'dev-stack',
    command: globalThis.process.execPath,
    args: ['--import', 'tsx', join(repoRoot(), 'dev/cmd/dev-stack.ts')],
    logFile: join(stateDir, 'dev-stack.log'),
    env: {
      ...withoutClusterVariables(globalThis.process.env),
      DEV_STATE_DIR: stateDir,
      ACL_PORT: String(ports ? ports.acl : 0),
      DECISION_PORT: String(ports ? ports.decision : 0),
      CONTROLLER_PORT: String(ports ? ports.controller : 0),
      ...env,
    },
    processGroup: true,
  });
  return {
    stateDir,
    envFile: join(stateDir, 'env'),
    process,
    signal: async (signal, timeoutMs = 60_000) => {
      if (process.isRunning()) globalThis.process.kill(process.pid, signal);
      const exit = await withinTime(process.exited, timeoutMs);
      if (exit !== undefined) return exit;
      await process.kill();
      throw new Error(`the development stack did not end within ${timeoutMs} ms of ${signal}`);
    },
  };
}

// The stack under test must be the local one, whatever the developer's shell points at.
function withoutClusterVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { KUBECONFIG: _kubeconfig, SPICEDB_ENDPOINT: _endpoint, SPICEDB_TOKEN: _token, ...rest } = env;
  return rest;
}

/**
 * Waits for the `env` file that this start of the stack writes when it is ready: one written before
 * `startedAt` (left by a stack that was killed) does not count. Fails at once when the stack exits.
 */
export async function waitUntilReady(
  stack: DevStackProcess,
  startedAt: number,
  timeoutMs = 180_000,
): Promise<DevStackEnv> {
  const ready = async () => {
    if (await writtenSince(stack.envFile, startedAt)) return true;
    if (!stack.process.isRunning())
      throw await stackFailure(stack, `exited with ${await stack.process.exited}`);
    return false;
  };
  const notReady = () => stackFailure(stack, `did not write ${stack.envFile} in ${timeoutMs} ms`);
  await until(ready, notReady, timeoutMs, 250);
  return parseStateFile(await readFile(stack.envFile, 'utf8')) as DevStackEnv;
}

async function writtenSince(path: string, since: number): Promise<boolean> {
  const stats = await stat(path).catch(() => undefined);
  return stats !== undefined && stats.mtimeMs >= since;
}

async function stackFailure(stack: DevStackProcess, what: string): Promise<Error> {
  const tail = await readLogTail(stack.process.logFile, 40);
  return new Error(`the development stack ${what}; last lines of ${stack.process.logFile}:\n${tail}`);
}

/** PIDs of the processes still in the stack's process group (children that outlived it included). */
export async function processesOfStack(stack: DevStackProcess): Promise<number[]> {
  try {
    const { stdout } = await run('pgrep', ['-g', String(stack.process.pid)]);
    return stdout.split('\n').filter(Boolean).map(Number);
  } catch (error) {
    if ((error as { code?: number }).code === 1) return []; // pgrep: nothing matched
    throw error;
  }
}

/**
 * Fails unless every process of the stack's group has ended. A helper such as tsx's esbuild service ends
 * shortly after the stack, so the group gets a while to empty; etcd or kube-apiserver left running would not.
 */
export async function assertNoProcessLeft(stack: DevStackProcess, timeoutMs = 30_000): Promise<void> {
  let survivors: number[] = [];
  const outlived = async () => {
    const { stdout } = await run('ps', ['-o', 'pid=,args=', '-p', survivors.join(',')]).catch(() => ({
      stdout: survivors.join(', '),
    }));
    return new Error(`processes of the development stack outlived it:\n${stdout}`);
  };
  const noneLeft = async () => (survivors = await processesOfStack(stack)).length === 0;
  await until(noneLeft, outlived, timeoutMs, 250);
}
