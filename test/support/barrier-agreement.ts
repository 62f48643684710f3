import { POLL_TIMEOUT_MS, until } from '../../dev/wait/until.js';

/**
 * How the decision service evaluated checks, by
 * `policygrant_decision_check_consistency_total{consistency}`.
 */
export type ConsistencySource = 'minimize_latency' | 'touched' | 'caller_token' | 'head';

/** The count of checks evaluated at `source`, read from the decision service's metrics text. */
export function consistencyCount(metricsText: string, source: ConsistencySource): number {
  const prefix = `policygrant_decision_check_consistency_total{consistency="${source}"}`;
  const line = metricsText.split('\n').find((candidate) => candidate.startsWith(prefix));
  return Number(line?.split(' ')[1] ?? 0);
}

export interface BarrierAgreement {
  /** One check without a token: is it allowed? */
  allowed: () => Promise<boolean>;
  /** The decision service's metrics text; nothing else may check on that service meanwhile. */
  metricsText: () => Promise<string>;
  expected: boolean;
  what: string;
}

/**
 * What a user can rely on once `kubectl` shows a change in a grant's status: a check without a token agrees
 * with it as soon as the decision service's SpiceDB Watch has delivered the change (the Watch lag, milliseconds;
 * `npm run bench:e2e` measures it), and from then on through the revision barrier, never from a quantized
 * snapshot. Whether the Watch has delivered it yet is not observable from outside, so this checks until an
 * answer agrees AND was not evaluated at minimize_latency (a quantized snapshot may agree by chance once its
 * window has passed the change; only the barrier makes agreement certain). An answer that disagrees after one
 * agreed fails at once: the barrier never goes back to an older revision. Returns how many answers came before.
 */
export async function untilBarrierAgrees(agreement: BarrierAgreement): Promise<number> {
  let answersBefore = 0;
  let agreedOnce = false;
  const agreesThroughBarrier = async (): Promise<boolean> => {
    const quantizedBefore = consistencyCount(await agreement.metricsText(), 'minimize_latency');
    const agrees = (await agreement.allowed()) === agreement.expected;
    const quantized = consistencyCount(await agreement.metricsText(), 'minimize_latency') > quantizedBefore;
    if (agreedOnce && !agrees) {
      throw new Error(
        `${agreement.what}: the check agreed, then answered ${String(!agreement.expected)} again`,
      );
    }
    if (agrees && !quantized) return true;
    agreedOnce ||= agrees;
    answersBefore += 1;
    return false;
  };
  const noAgreement = () =>
    new Error(`${agreement.what}: no check agreed through the revision barrier within ${POLL_TIMEOUT_MS} ms`);
  await until(agreesThroughBarrier, noAgreement, POLL_TIMEOUT_MS, 0);
  return answersBefore;
}
