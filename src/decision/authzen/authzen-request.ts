import { z } from 'zod';
import { MAX_ID_LENGTH, MAX_NAME_LENGTH } from '../check-request.js';

/**
 * The request shapes of OpenID AuthZEN Authorization API 1.0 in this decision point's vocabulary (the check's,
 * docs/authzen.md, "AuthZEN"). The specification's MUST: receivers ignore members they do not know, so
 * every object here drops the members it does not declare (at every level, `properties` included) instead of
 * refusing them; what is dropped is never read, logged or kept. A declared member of the wrong type is a 400
 * naming it. `context` is accepted and not evaluated: no relation of the registry depends on it.
 */

/** Most evaluations in one batch: one CheckBulkPermissions call per consistency class carries them all. */
export const MAX_EVALUATIONS = 100;
/** Results per search page when `page.limit` is absent, and the most a page may hold. */
export const DEFAULT_PAGE_LIMIT = 1_000;
export const MAX_PAGE_LIMIT = 1_000;
export const MAX_PAGE_TOKEN_LENGTH = 4_096;

const typeName = (description: string) => z.string().min(1).max(MAX_NAME_LENGTH).meta({ description });
const objectId = (description: string) => z.string().min(1).max(MAX_ID_LENGTH).meta({ description });

const subjectProperties = z
  .object({
    organisation_id: z
      .string()
      .max(MAX_ID_LENGTH)
      .optional()
      .meta({ description: 'The organisation of a `group` subject; absent for `user` and `agent`' }),
  })
  .meta({ description: 'Any members; only `organisation_id` is read, the others are ignored' });
/** Nothing of a resource or action besides its type/id or name is evaluated: any properties are ignored. */
const ignoredProperties = z.object({}).meta({ description: 'Any members; ignored' });
const context = z.record(z.string(), z.unknown()).meta({ description: 'Accepted; not evaluated' });

export const subjectSchema = z
  .object({
    type: typeName('`user`, `agent` or `group`'),
    id: objectId('The user id, the agent id, or the group id within `properties.organisation_id`'),
    properties: subjectProperties.optional(),
  })
  .meta({ id: 'AuthzenSubject' });
export const resourceSchema = z
  .object({
    type: typeName('`resource`, or its alias `DATABANK`'),
    id: objectId('The item id as the ACL service knows it (a URN)'),
    properties: ignoredProperties.optional(),
  })
  .meta({ id: 'AuthzenResource' });
export const actionSchema = z
  .object({
    name: typeName('A relation of the check: api, file, sub, viewer, editor, owner, delegated_*'),
    properties: ignoredProperties.optional(),
  })
  .meta({ id: 'AuthzenAction' });

export const evaluationRequestSchema = z
  .object({
    subject: subjectSchema,
    resource: resourceSchema,
    action: actionSchema,
    context: context.optional(),
  })
  .meta({ id: 'AuthzenEvaluationRequest' });
export type EvaluationRequest = z.output<typeof evaluationRequestSchema>;

export const EVALUATIONS_SEMANTICS = ['execute_all', 'deny_on_first_deny', 'permit_on_first_permit'] as const;
export type EvaluationsSemantic = (typeof EVALUATIONS_SEMANTICS)[number];

const evaluationItem = z.object({
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
      .object({ evaluations_semantic: z.enum(EVALUATIONS_SEMANTICS).default('execute_all') })
      .optional()
      .meta({ description: 'Options this decision point does not know are ignored' }),
  })
  .meta({ id: 'AuthzenEvaluationsRequest' });
export type EvaluationsRequest = z.output<typeof evaluationsRequestSchema>;

export const pageRequestSchema = z
  .object({
    token: z.string().max(MAX_PAGE_TOKEN_LENGTH).optional().meta({
      description: 'The `next_token` of the previous page; the search must be the same',
    }),
    limit: z
      .number()
      .int()
      .min(0)
      .max(MAX_PAGE_LIMIT)
      .optional()
      .meta({
        description: `Most results in the page; ${DEFAULT_PAGE_LIMIT} when absent or 0`,
      }),
    properties: ignoredProperties.optional(),
  })
  .meta({ id: 'AuthzenPageRequest' });
export type PageRequest = z.output<typeof pageRequestSchema>;

/**
 * The most results a page holds. 0 is the default page size, as an absent limit: a limit of 0 taken literally
 * would answer empty pages, and a client must repeat the limit on every later page, so it would never end.
 */
export function pageLimit(page: PageRequest | undefined): number {
  return page?.limit || DEFAULT_PAGE_LIMIT;
}

/** The searched side of a search: its type; an `id` (and any other member) is ignored, as AuthZEN says. */
const searchedType = (description: string) =>
  z.object({ type: typeName(description) }).meta({ description: 'An `id` here is ignored' });

export const subjectSearchRequestSchema = z
  .object({
    subject: searchedType('`user` or `agent`: the type of the subjects searched'),
    resource: resourceSchema,
    action: actionSchema,
    context: context.optional(),
    page: pageRequestSchema.optional(),
  })
  .meta({ id: 'AuthzenSubjectSearchRequest' });
export type SubjectSearchRequest = z.output<typeof subjectSearchRequestSchema>;

export const resourceSearchRequestSchema = z
  .object({
    subject: subjectSchema,
    resource: searchedType('`resource` (or `DATABANK`): the type searched'),
    action: actionSchema,
    context: context.optional(),
    page: pageRequestSchema.optional(),
  })
  .meta({ id: 'AuthzenResourceSearchRequest' });
export type ResourceSearchRequest = z.output<typeof resourceSearchRequestSchema>;

export const actionSearchRequestSchema = z
  .object({
    subject: subjectSchema,
    resource: resourceSchema,
    context: context.optional(),
    page: pageRequestSchema.optional(),
  })
  .meta({ id: 'AuthzenActionSearchRequest' });
export type ActionSearchRequest = z.output<typeof actionSearchRequestSchema>;
