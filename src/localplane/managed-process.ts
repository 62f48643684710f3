import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
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
  const [command, args] = existsSync(SETPRIV)
    ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', spec.command, ...spec.args]]
    : [spec.command, spec.args];
  const child = spawn(command, args, { env: spec.env ?? process.env, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
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
    return Promise.race([exited.then(() => true), delay(waitMs).then(() => false)]);
  };
  return {
    name: spec.name,
    pid: child.pid,
    logFile: spec.logFile,
    exited,
    isRunning,
    async stop(graceMs = 10_000) {
      if (!(await signalAndWait('SIGTERM', graceMs))) await signalAndWait('SIGKILL', graceMs);
    },
    async kill() {
      await signalAndWait('SIGKILL', 10_000);
    },
  };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it resolves true; fails naming the process and its log when it exits or time runs out. */
export async function waitUntilHealthy(
  process: ManagedProcess,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!process.isRunning()) {
      throw new Error(`${process.name} exited with ${await process.exited}; see ${process.logFile}`);
    }
    if (await probe().catch(() => false)) return;
    await delay(200);
  }
  throw new Error(`${process.name} was not healthy within ${timeoutMs} ms; see ${process.logFile}`);
}
