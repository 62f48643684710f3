import { z } from 'zod';
import { MAX_ID_LENGTH, MAX_NAME_LENGTH } from '../check-request.js';

/**
 * The request shapes of OpenID AuthZEN Authorization API 1.0 in this decision point's vocabulary (the check's,
 * docs/decision-service.md, "AuthZEN"). Objects are strict: a field this decision point does not read (a
 * misspelt `organization_id`, a property it does not evaluate) is a 400 naming it, never silently ignored.
 * `context` is accepted and not evaluated: no relation of the registry depends on it.
 */

/** Most evaluations in one batch: one CheckBulkPermissions call per consistency class carries them all. */
export const MAX_EVALUATIONS = 100;
/** Results per search page when `page.limit` is absent, and the most a page may hold. */
export const DEFAULT_PAGE_LIMIT = 1_000;
export const MAX_PAGE_LIMIT = 1_000;
export const MAX_PAGE_TOKEN_LENGTH = 4_096;

const typeName = (description: string) => z.string().min(1).max(MAX_NAME_LENGTH).meta({ description });
const objectId = (description: string) => z.string().min(1).max(MAX_ID_LENGTH).meta({ description });

const subjectProperties = z.strictObject({
  organisation_id: z
    .string()
    .max(MAX_ID_LENGTH)
    .optional()
    .meta({ description: 'The organisation of a `group` subject; absent for `user` and `agent`' }),
});
/** Nothing of a resource or action besides its type/id or name is evaluated. */
const noProperties = z.strictObject({});
const context = z.record(z.string(), z.unknown()).meta({ description: 'Accepted; not evaluated' });

export const subjectSchema = z
  .strictObject({
    type: typeName('`user`, `agent` or `group`'),
    id: objectId('The user id, the agent id, or the group id within `properties.organisation_id`'),
    properties: subjectProperties.optional(),
  })
  .meta({ id: 'AuthzenSubject' });
export const resourceSchema = z
  .strictObject({
    type: typeName('`resource`, or its alias `DATABANK`'),
    id: objectId('The item id as the ACL service knows it (a URN)'),
    properties: noProperties.optional(),
  })
  .meta({ id: 'AuthzenResource' });
export const actionSchema = z
  .strictObject({
    name: typeName('A relation of the check: api, file, sub, viewer, editor, owner, delegated_*'),
    properties: noProperties.optional(),
  })
  .meta({ id: 'AuthzenAction' });

export const evaluationRequestSchema = z
  .strictObject({
    subject: subjectSchema,
    resource: resourceSchema,
    action: actionSchema,
    context: context.optional(),
  })
  .meta({ id: 'AuthzenEvaluationRequest' });
export type EvaluationRequest = z.output<typeof evaluationRequestSchema>;

export const EVALUATIONS_SEMANTICS = ['execute_all', 'deny_on_first_deny', 'permit_on_first_permit'] as const;
export type EvaluationsSemantic = (typeof EVALUATIONS_SEMANTICS)[number];

const evaluationItem = z.strictObject({
  subject: subjectSchema.optional(),
  resource: resourceSchema.optional(),
  action: actionSchema.optional(),
  context: context.optional(),
});
export type EvaluationItem = z.output<typeof evaluationItem>;

export const evaluationsRequestSchema = evaluationItem
  .extend({
    evaluations: z
      .array(evaluationItem)
      .max(MAX_EVALUATIONS)
      .optional()
      .meta({
        description: `Each overrides the top-level defaults; at most ${MAX_EVALUATIONS}. Absent or empty: one evaluation of the top level`,
      }),
    options: z
      .strictObject({ evaluations_semantic: z.enum(EVALUATIONS_SEMANTICS).default('execute_all') })
      .optional(),
  })
  .meta({ id: 'AuthzenEvaluationsRequest' });
export type EvaluationsRequest = z.output<typeof evaluationsRequestSchema>;

export const pageRequestSchema = z
  .strictObject({
    token: z.string().max(MAX_PAGE_TOKEN_LENGTH).optional().meta({
      description: 'The `next_token` of the previous page; the search must be the same',
    }),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE_LIMIT)
      .optional()
      .meta({
        description: `Most results in the page; ${DEFAULT_PAGE_LIMIT} when absent`,
      }),
  })
  .meta({ id: 'AuthzenPageRequest' });
export type PageRequest = z.output<typeof pageRequestSchema>;

export const subjectSearchRequestSchema = z
  .strictObject({
    subject: z.strictObject({ type: typeName('`user` or `agent`: the type of the subjects searched') }),
    resource: resourceSchema,
    action: actionSchema,
    context: context.optional(),
    page: pageRequestSchema.optional(),
  })
  .meta({ id: 'AuthzenSubjectSearchRequest' });
export type SubjectSearchRequest = z.output<typeof subjectSearchRequestSchema>;

export const resourceSearchRequestSchema = z
  .strictObject({
    subject: subjectSchema,
    resource: z.strictObject({ type: typeName('`resource` (or `DATABANK`): the type searched') }),
    action: actionSchema,
    context: context.optional(),
    page: pageRequestSchema.optional(),
  })
  .meta({ id: 'AuthzenResourceSearchRequest' });
export type ResourceSearchRequest = z.output<typeof resourceSearchRequestSchema>;

export const actionSearchRequestSchema = z
  .strictObject({
    subject: subjectSchema,
    resource: resourceSchema,
    context: context.optional(),
    page: pageRequestSchema.optional(),
  })
  .meta({ id: 'AuthzenActionSearchRequest' });
export type ActionSearchRequest = z.output<typeof actionSearchRequestSchema>;
