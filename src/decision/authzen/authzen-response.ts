import { z } from 'zod';
import { problemSchema } from '../../http/envelope.js';

/** The response shapes of OpenID AuthZEN Authorization API 1.0 that this decision point answers. */

export const decisionSchema = z
  .object({ decision: z.boolean().meta({ description: 'true only on SpiceDB HAS_PERMISSION' }) })
  .meta({ id: 'AuthzenDecision' });
export type DecisionAnswer = z.output<typeof decisionSchema>;

export const evaluationsResponseSchema = z
  .object({
    evaluations: z.array(decisionSchema).optional(),
    decision: z.boolean().optional().meta({ description: 'Only when the request held no `evaluations`' }),
  })
  .meta({ id: 'AuthzenEvaluationsResponse' });

export const pageResponseSchema = z
  .object({
    next_token: z.string().meta({ description: 'Opaque; empty when this is the last page' }),
    count: z.number().int().meta({ description: 'Results in this page' }),
  })
  .meta({ id: 'AuthzenPageResponse' });

const searchResponse = <T extends z.ZodType>(id: string, result: T) =>
  z.object({ results: z.array(result), page: pageResponseSchema }).meta({ id });

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
