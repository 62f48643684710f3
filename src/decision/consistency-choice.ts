import type { TrackedRevision } from './revision-tracker.js';

/**
 * How a check is evaluated: `minimize_latency` (SpiceDB's quantized snapshot); at least as fresh as the newest
 * recent change that touched its resource or subject (`touched`) or as the caller's token (`caller_token`); or
 * at least as fresh as SpiceDB's head revision read after the check arrived (`head`).
 */
export type ConsistencyChoice =
  | { source: 'minimize_latency' }
  | { source: 'touched'; token: string }
  | { source: 'caller_token'; token: string }
  | { source: 'head' };

export type ConsistencySource = ConsistencyChoice['source'];

export const CONSISTENCY_SOURCES: readonly ConsistencySource[] = [
  'minimize_latency',
  'touched',
  'caller_token',
  'head',
];

export interface ConsistencyInput {
  /** The Watch is connected: every change it has not delivered yet is younger than this check. */
  watchCurrent: boolean;
  /** The newest recent revision that touched the check's resource or subject. */
  touched: TrackedRevision | undefined;
  callerToken: string | undefined;
  /** The caller's token's place in the Watch's order; undefined when the Watch did not deliver it recently. */
  callerPosition: number | undefined;
}

/**
 * Never a quantized answer when something recent may be missing from the snapshot. The head revision is at
 * least as fresh as anything else, so it settles every case where the order is unknown: the Watch is down or
 * not yet current, or the caller's token is one the Watch did not deliver (ahead of the Watch, older than the
 * retention, or a read revision) while the check's keys were touched.
 */
export function chooseConsistency(input: ConsistencyInput): ConsistencyChoice {
  const { watchCurrent, touched, callerToken, callerPosition } = input;
  if (!watchCurrent) return { source: 'head' };
  if (callerToken === undefined) {
    return touched ? { source: 'touched', token: touched.token } : { source: 'minimize_latency' };
  }
  if (!touched) return { source: 'caller_token', token: callerToken };
  if (callerPosition === undefined) return { source: 'head' };
  return callerPosition > touched.position
    ? { source: 'caller_token', token: callerToken }
    : { source: 'touched', token: touched.token };
}
