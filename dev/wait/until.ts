import { sleep } from './sleep.js';

/**
 * How long a poll waits for another process by default, sized for a loaded machine: CI runs the whole test
 * suite on two shared cores, every project at once, so a wait that suits an idle laptop times out there (a run
 * beside other suites has seen a controller take over 30 s to write a status). A poll that succeeds returns at
 * once, so only a failing wait pays for it.
 */
export const POLL_TIMEOUT_MS = 60_000;

/**
 * What a wait is for, named in the error of its timeout; or the error itself, built only then, for a wait whose
 * failure carries more (a log's last lines, the state it saw).
 */
export type WaitedFor = string | (() => Error | Promise<Error>);

/**
 * Polls `check` every `pollMs` until it holds; fails naming `what` after `timeoutMs`. A check that throws ends
 * the wait at once with its error (a process that exited will never become ready). The one poll-until-deadline
 * loop of the tests, the development tooling and the benchmarks: named waits are built on it.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: WaitedFor = 'the condition',
  timeoutMs = POLL_TIMEOUT_MS,
  pollMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw typeof what === 'string'
        ? new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
        : await what();
    }
    await sleep(pollMs);
  }
}
