import { PATIENCE_MS } from './patience.js';

/**
 * Polls `check` every `pollMs` until it holds; fails naming `what` after `timeoutMs`. Tests and benchmarks both
 * wait with it.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what = 'the condition',
  timeoutMs = PATIENCE_MS,
  pollMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
