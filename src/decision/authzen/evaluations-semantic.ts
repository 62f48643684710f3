import type { EvaluationsSemantic } from './authzen-request.js';

/**
 * The answers of a batch under its `evaluations_semantic` (AuthZEN 1.0): `execute_all` answers every
 * evaluation; `deny_on_first_deny` stops after the first deny and `permit_on_first_permit` after the first
 * permit, answering the evaluations up to and including it. Decisions are in request order.
 */
export function answeredDecisions(decisions: readonly boolean[], semantic: EvaluationsSemantic): boolean[] {
  if (semantic === 'execute_all') return [...decisions];
  const stopAt = semantic === 'deny_on_first_deny' ? false : true;
  const first = decisions.indexOf(stopAt);
  return first === -1 ? [...decisions] : decisions.slice(0, first + 1);
}
