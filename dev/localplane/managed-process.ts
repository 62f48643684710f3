import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { readLogTail } from './log-tail.js';
import { until } from '../wait/until.js';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /** Start it as the leader of a new process group (its children join the group unless they leave it). */
  processGroup?: boolean;
  /** Run it as a user other than root (see `asNonRoot`): for servers that refuse to run as root (PostgreSQL). */
  nonRoot?: boolean;
  /** The signal stop() sends first (default SIGTERM). */
  stopSignal?: NodeJS.Signals;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  isRunning(): boolean;
  /** SIGTERM, then SIGKILL after the grace period. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once: for failure tests that need an abrupt death. */
  kill(): Promise<void>;
}

// PR_SET_PDEATHSIG through util-linux's setpriv: the kernel kills the child when this process dies,
// however it dies (SIGKILL included), so an aborted test run leaves no etcd or kube-apiserver behind.
const SETPRIV = '/usr/bin/setpriv';
const running = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function startProcess(spec: ProcessSpec): ManagedProcess {
  const logFd = openSync(spec.logFile, 'a');
  const [command, args] = commandLine(spec);
  const child = spawn(command, args, {
    env: spec.env ?? process.env,
    stdio: ['ignore', logFd, logFd],
    detached: spec.processGroup ?? false,
  });
  closeSync(logFd);
  // Without this listener a failed spawn (no such binary) would be an uncaught error; the pid check reports it.
  child.once('error', () => undefined);
  if (child.pid === undefined) throw new Error(`${spec.name}: could not start ${spec.command}`);
  running.add(child);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const isRunning = () => child.exitCode === null && child.signalCode === null;
  const signalAndWait = async (signal: NodeJS.Signals, waitMs: number) => {
    if (!isRunning()) return true;
    child.kill(signal);
    return (await withinTime(exited, waitMs)) !== undefined;
  };
  return {
    name: spec.name,
    pid: child.pid,
    logFile: spec.logFile,
    exited,
    isRunning,
    async stop(graceMs = 10_000) {
      if (!(await signalAndWait(spec.stopSignal ?? 'SIGTERM', graceMs)))
        await signalAndWait('SIGKILL', graceMs);
    },
    async kill() {
      await signalAndWait('SIGKILL', 10_000);
    },
  };
}

/** The command and its arguments, behind setpriv when it is there, in a user namespace when `nonRoot`. */
function commandLine(spec: ProcessSpec): [string, string[]] {
  const [command, args]: [string, string[]] = existsSync(SETPRIV)
    ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', spec.command, ...spec.args]]
    : [spec.command, spec.args];
  // setpriv runs inside the namespace: entering one may clear the parent-death signal.
  return spec.nonRoot ? asNonRoot(command, args) : [command, args];
}

const UNSHARE = '/usr/bin/unshare';
const NON_ROOT_ID = '1000';

/**
 * `command` for a caller that is root, run as uid 1000 in a user namespace of its own (util-linux unshare),
 * where the caller's files appear as that user's: the program no longer runs as root, yet reads and writes
 * the caller's folders whatever their modes (a clone under a 0700 folder), and what it creates stays the
 * caller's. For a caller that is not root, `command` as it is.
 */
export function asNonRoot(command: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, args];
  if (!existsSync(UNSHARE)) throw new Error(`running ${command} as a user other than root needs ${UNSHARE}`);
  return [
    UNSHARE,
    ['--user', `--map-user=${NON_ROOT_ID}`, `--map-group=${NON_ROOT_ID}`, '--', command, ...args],
  ];
}

/** What `promise` resolves to, or undefined after `ms`; the timer does not outlive the answer. */
export async function withinTime<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `probe` until it resolves true. Fails as soon as the process exits, or when time runs out (a probe
 * still waiting on a server that never answers holds up neither), with the last lines of the process's log.
 */
export async function waitUntilHealthy(
  process: ManagedProcess,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const exit = process.exited.then((status) => ({ exit: status }));
  const deadline = Date.now() + timeoutMs;
  const healthy = async (): Promise<boolean> => {
    const answer = Promise.race([probe().catch(() => false), exit]);
    const outcome = await withinTime(answer, Math.max(0, deadline - Date.now()));
    if (typeof outcome === 'object') throw await startFailure(process, `exited with ${outcome.exit}`);
    return outcome === true;
  };
  await until(healthy, () => startFailure(process, `was not healthy within ${timeoutMs} ms`), timeoutMs, 200);
}

/** Starts a process and waits until `probe` says it serves; if it never does, the process is stopped. */
export async function startHealthyProcess(
  spec: ProcessSpec,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<ManagedProcess> {
  const process = startProcess(spec);
  try {
    await waitUntilHealthy(process, probe, timeoutMs);
    return process;
  } catch (error) {
    await process.stop();
    throw error;
  }
}

async function startFailure(process: ManagedProcess, what: string): Promise<Error> {
  const tail = await readLogTail(process.logFile);
  return new Error(`${process.name} ${what}; last lines of ${process.logFile}:\n${tail}`);
}
