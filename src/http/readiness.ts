export interface ReadinessCheck {
  /** The dependency, as the 503 names it: `kubernetes`, `spicedb`, `jwks`. */
  name: string;
  /** Resolves when the dependency is usable; the signal aborts when the check has timed out. */
  check: (signal: AbortSignal) => Promise<unknown>;
  timeoutMs?: number;
  /**
   * False for a dependency the service can partly work without (the audit store: reads go on, mutations
   * answer 503): its failure is named in the answer, which stays 200 so that the replica keeps serving.
   */
  required?: boolean;
}

export type CheckStatus = 'ok' | 'failed' | 'timeout';

export interface CheckOutcome {
  name: string;
  required: boolean;
  status: CheckStatus;
  durationMs: number;
  /** Why it failed; logged, not returned to callers. */
  error?: string;
}

export const DEFAULT_CHECK_TIMEOUT_MS = 2_000;

/** Runs all checks at once, each bounded by its timeout. */
export function runReadinessChecks(
  checks: readonly ReadinessCheck[],
  defaultTimeoutMs: number = DEFAULT_CHECK_TIMEOUT_MS,
): Promise<CheckOutcome[]> {
  return Promise.all(checks.map((check) => runCheck(check, check.timeoutMs ?? defaultTimeoutMs)));
}

async function runCheck(readiness: ReadinessCheck, timeoutMs: number): Promise<CheckOutcome> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const outcome = (status: CheckStatus, error?: string): CheckOutcome => ({
    name: readiness.name,
    required: readiness.required ?? true,
    status,
    durationMs: Math.round(performance.now() - started),
    ...(error === undefined ? {} : { error }),
  });
  try {
    const winner = await Promise.race([
      readiness.check(controller.signal).then(() => 'ok' as const),
      timedOut,
    ]);
    if (winner === 'ok') return outcome('ok');
    controller.abort();
    return outcome('timeout', `timed out after ${timeoutMs} ms`);
  } catch (error) {
    return outcome('failed', error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}
