import type { EvaluationsSemantic } from './authzen-request.js';

/**
 * The answers of a batch under its `evaluations_semantic` (AuthZEN 1.0): `execute_all` answers every
 * evaluation; `deny_on_first_deny` stops after the first deny (an evaluation that could not be decided is one)
 * and `permit_on_first_permit` after the first permit, answering the evaluations up to and including it.
 * Answers are in request order.
 */
export function answeredDecisions<T extends { decision: boolean }>(
  answers: readonly T[],
  semantic: EvaluationsSemantic,
): T[] {
  if (semantic === 'execute_all') return [...answers];
  const stopAt = semantic === 'permit_on_first_permit';
  const first = answers.findIndex((answer) => answer.decision === stopAt);
  return first === -1 ? [...answers] : answers.slice(0, first + 1);
}
