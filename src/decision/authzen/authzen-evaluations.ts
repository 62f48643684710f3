import { HttpError } from '../../http/errors.js';
import type { Registry } from '../../spicedb/registry.js';
import type { CanonicalCheckEvaluator } from '../check-evaluator.js';
import type { EvaluationItem, EvaluationRequest, EvaluationsRequest } from './authzen-request.js';
import type { DecisionAnswer } from './authzen-response.js';
import { canonicalEvaluation } from './authzen-vocabulary.js';
import type { AuthzenTriple } from './authzen-vocabulary.js';
import { answeredDecisions } from './evaluations-semantic.js';
import { scopedEvaluator } from '../organisation-scope.js';
import type { OrganisationScope } from '../organisation-scope.js';

/** `scope`: the items the caller's evaluations may permit (check-callers.ts, evaluationScope). */
export interface AuthzenEvaluator {
  evaluation(request: EvaluationRequest, scope: OrganisationScope): Promise<DecisionAnswer>;
  evaluations(
    request: EvaluationsRequest,
    scope: OrganisationScope,
  ): Promise<{ evaluations: DecisionAnswer[] } | DecisionAnswer>;
}

type Part = 'subject' | 'resource' | 'action';

/**
 * AuthZEN evaluations as checks of the check's own evaluator (decision cache, revision barrier, batcher): the
 * evaluations of a batch are asked together, so the check batcher sends them as one CheckBulkPermissions per
 * consistency class. Every evaluation is checked against the vocabulary before any is asked: one outside it
 * is a 400 naming it, and the batch is not evaluated. An item outside the caller's scope is a deny.
 */
export function authzenEvaluator(registry: Registry, evaluate: CanonicalCheckEvaluator): AuthzenEvaluator {
  const scoped = scopedEvaluator(evaluate);
  const decide = async (triple: AuthzenTriple, scope: OrganisationScope) =>
    (await scoped(canonicalEvaluation(registry, triple), undefined, scope)).allowed;
  return {
    async evaluation(request, scope) {
      return { decision: await decide(request, scope) };
    },
    async evaluations(request, scope) {
      const items = request.evaluations ?? [];
      if (items.length === 0) return { decision: await decide(withDefaults(request, {}, ''), scope) };
      const checks = items.map((item, index) => {
        const at = `evaluations[${index}].`;
        return canonicalEvaluation(registry, withDefaults(request, item, at), at);
      });
      const decisions = await Promise.all(
        checks.map(async (check) => (await scoped(check, undefined, scope)).allowed),
      );
      const semantic = request.options?.evaluations_semantic ?? 'execute_all';
      return { evaluations: answeredDecisions(decisions, semantic).map((decision) => ({ decision })) };
    },
  };
}

/** An evaluation's subject, resource and action: its own, else the request's top-level default; 400 if neither. */
function withDefaults(defaults: EvaluationItem, item: EvaluationItem, at: string): AuthzenTriple {
  const either = <K extends Part>(part: K): NonNullable<EvaluationItem[K]> => {
    const value = item[part] ?? defaults[part];
    if (value === undefined) {
      throw new HttpError('BadRequest', `${at}${part}: required, in the evaluation or at the top level`);
    }
    return value;
  };
  return { subject: either('subject'), resource: either('resource'), action: either('action') };
}
