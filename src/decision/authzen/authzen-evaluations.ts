import { HttpError } from '../../http/errors.js';
import type { Registry } from '../../spicedb/registry.js';
import type { CanonicalCheck } from '../canonical-check.js';
import type { CanonicalCheckEvaluator } from '../canonical-check.js';
import type { EvaluationItem, EvaluationRequest, EvaluationsRequest } from './authzen-request.js';
import type { DecisionAnswer, EvaluationAnswer } from './authzen-response.js';
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
  ): Promise<{ evaluations: EvaluationAnswer[] } | DecisionAnswer>;
}

type Part = 'subject' | 'resource' | 'action';

/** An evaluation of a batch: the check it asks, or the answer of one that cannot be asked. */
type BatchItem = { check: CanonicalCheck } | { undecided: EvaluationAnswer };

/**
 * AuthZEN evaluations as checks of the check's own evaluator (decision cache, revision barrier, batcher): the
 * evaluations of a batch are asked together, so the check batcher sends them as one CheckBulkPermissions per
 * consistency class. A single evaluation outside the vocabulary is a 400 naming the field. In a batch, each
 * evaluation stands alone (AuthZEN's errors of individual evaluations): one outside the vocabulary answers
 * `decision: false` with the error in its `context`, and the others are still asked. A batch that is malformed
 * as a whole (an evaluation missing a part that has no top-level default) is a 400, and nothing is asked. An
 * item outside the caller's scope is a deny.
 */
export function authzenEvaluator(registry: Registry, evaluate: CanonicalCheckEvaluator): AuthzenEvaluator {
  const scoped = scopedEvaluator(evaluate);
  const decide = async (check: CanonicalCheck, scope: OrganisationScope) =>
    (await scoped(check, undefined, scope)).allowed;
  return {
    async evaluation(request, scope) {
      return { decision: await decide(canonicalEvaluation(registry, request), scope) };
    },
    async evaluations(request, scope) {
      const items = request.evaluations ?? [];
      if (items.length === 0) {
        return {
          decision: await decide(canonicalEvaluation(registry, withDefaults(request, {}, '')), scope),
        };
      }
      const triples = items.map((item, index) => withDefaults(request, item, `evaluations[${index}].`));
      const answers = await Promise.all(
        triples
          .map((triple, index) => batchItem(registry, triple, `evaluations[${index}].`))
          .map(async (item) =>
            'check' in item ? { decision: await decide(item.check, scope) } : item.undecided,
          ),
      );
      const semantic = request.options?.evaluations_semantic ?? 'execute_all';
      return { evaluations: answeredDecisions(answers, semantic) };
    },
  };
}

/** The check of one evaluation of a batch, or (outside the vocabulary) its denial carrying the 400 it would be. */
function batchItem(registry: Registry, triple: AuthzenTriple, at: string): BatchItem {
  try {
    return { check: canonicalEvaluation(registry, triple, at) };
  } catch (error) {
    if (!(error instanceof HttpError) || error.kind !== 'BadRequest') throw error;
    return {
      undecided: { decision: false, context: { error: { status: error.status, message: error.detail } } },
    };
  }
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
