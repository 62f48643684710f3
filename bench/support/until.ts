/** Polls `condition` every `pollMs` until it holds; throws once `timeoutMs` have passed without it. */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
