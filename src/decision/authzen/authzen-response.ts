import { z } from 'zod';
import { problemSchema } from '../../http/envelope.js';

/** The response shapes of OpenID AuthZEN Authorization API 1.0 that this decision point answers. */

export const decisionSchema = z
  .object({ decision: z.boolean().meta({ description: 'true only on SpiceDB HAS_PERMISSION' }) })
  .meta({ id: 'AuthzenDecision' });
export type DecisionAnswer = z.output<typeof decisionSchema>;

/**
 * An evaluation of a batch that could not be decided (outside the vocabulary): denied, with the error in its
 * `context`, as AuthZEN illustrates errors of individual evaluations; the rest of the batch is answered.
 */
export const evaluationErrorSchema = z
  .object({
    status: z
      .number()
      .int()
      .meta({ description: 'The HTTP status the evaluation alone would have had: 400' }),
    message: z.string().meta({ description: 'What is wrong, naming the field' }),
  })
  .meta({ id: 'AuthzenEvaluationError' });
export type EvaluationError = z.output<typeof evaluationErrorSchema>;

export const evaluationAnswerSchema = decisionSchema
  .extend({
    context: z
      .object({ error: evaluationErrorSchema })
      .optional()
      .meta({ description: 'Only on an evaluation that could not be decided (`decision` false)' }),
  })
  .meta({ id: 'AuthzenEvaluationAnswer' });
export type EvaluationAnswer = z.output<typeof evaluationAnswerSchema>;

export const evaluationsResponseSchema = z
  .object({
    evaluations: z.array(evaluationAnswerSchema).optional(),
    decision: z.boolean().optional().meta({ description: 'Only when the request held no `evaluations`' }),
  })
  .meta({ id: 'AuthzenEvaluationsResponse' });

export const pageResponseSchema = z
  .object({
    next_token: z.string().meta({ description: 'Opaque; empty when this is the last page' }),
    count: z.number().int().meta({ description: 'Results in this page' }),
  })
  .meta({ id: 'AuthzenPageResponse' });

/** `page` first, as AuthZEN recommends. */
const searchResponse = <T extends z.ZodType>(id: string, result: T) =>
  z.object({ page: pageResponseSchema, results: z.array(result) }).meta({ id });

export const subjectSearchResponseSchema = searchResponse(
  'AuthzenSubjectSearchResponse',
  z.object({ type: z.string(), id: z.string() }),
);
export const resourceSearchResponseSchema = searchResponse(
  'AuthzenResourceSearchResponse',
  z.object({ type: z.string(), id: z.string() }),
);
export const actionSearchResponseSchema = searchResponse(
  'AuthzenActionSearchResponse',
  z.object({ name: z.string() }),
);

/** Every error answer of an AuthZEN route carries this, so that no reader can take it for a permit. */
export const AUTHZEN_DENIED = Object.freeze({ decision: false as const });

export const authzenProblemSchema = problemSchema.extend({ decision: z.literal(false) }).meta({
  id: 'AuthzenDeniedProblem',
  description: 'Error body of the AuthZEN routes: always `decision: false`',
});
