import { z } from 'zod';
import { problemSchema, resultEnvelopeSchema } from '../http/envelope.js';
import type { UrnScheme } from '../http/urn.js';
import { MAX_OBJECT_ID_BYTES } from '../spicedb/object-id.js';
import type { CheckRequest, FieldNames } from './canonical-check.js';

/** Raw ids are bounded before encoding; the encoder then bounds the encoded id (1024 bytes). */
export const MAX_ID_LENGTH = MAX_OBJECT_ID_BYTES;
export const MAX_NAME_LENGTH = 128;
export const MAX_CONSISTENCY_TOKEN_LENGTH = 1024;

/** ZedTokens are base64 (standard or URL alphabet); anything else cannot be one. */
export const ZEDTOKEN = /^[A-Za-z0-9+/_-]+={0,2}$/;

const name = (description: string, example: string) =>
  z.string().min(1).max(MAX_NAME_LENGTH).meta({ description, example });
const id = (description: string) => z.string().min(1).max(MAX_ID_LENGTH).meta({ description });

/**
 * The body of POST /v1/check: the check request of docs/decision-service.md, with the optional consistency
 * token. Unknown fields are rejected: a misspelt field (`organization_id`) must not be silently ignored by a
 * decision point. The vocabulary (types, relations) is the registry's; canonicalCheck() checks it and names the
 * field (CHECK_BODY_FIELDS).
 */
export const checkRequestSchema = z
  .strictObject({
    subject_type: name('`user`, `agent` (with the delegated relations) or `group`', 'user'),
    subject_id: id('The user id, the agent id, or the group id within `organisation_id`'),
    organisation_id: z.string().max(MAX_ID_LENGTH).optional().meta({
      description: 'Required (non-empty) when `subject_type` is `group`; empty or absent otherwise',
    }),
    resource_type: name('`resource`, or an alias such as the ACL item type `DATABANK`', 'resource'),
    resource_id: id('The item id as the ACL service knows it (a URN)'),
    relation: name(
      'A relation defined on the resource type: owner, editor, viewer, delegated_viewer, ' +
        'delegated_editor, delegated_querier (for an agent: an active delegation and its owner holding ' +
        'viewer, editor or api now), or an access type (api, file, sub)',
      'api',
    ),
    consistency_token: z
      .string()
      .max(MAX_CONSISTENCY_TOKEN_LENGTH)
      .regex(ZEDTOKEN, 'must be a ZedToken')
      .optional()
      .meta({
        description:
          'A ZedToken from the ACL API (wait option) or a grant status (`status.zedToken`): the check then ' +
          'sees at least every change up to it. Without it the check still sees every change to its ' +
          'resource or subject that the service has learnt of (its revision barrier, milliseconds after ' +
          'the write); the token also covers a check racing the write itself. Beyond the pattern: a ' +
          'revision this deployment’s SpiceDB issued (else 400).',
      }),
  })
  .meta({ id: 'CheckRequest' });

export type CheckRequestBody = z.output<typeof checkRequestSchema>;

/** The body's name of each field of the check request. */
export const CHECK_BODY_FIELDS: FieldNames = {
  'subject.type': 'subject_type',
  'subject.id': 'subject_id',
  'subject.organisation_id': 'organisation_id',
  'resource.type': 'resource_type',
  'resource.id': 'resource_id',
  relation: 'relation',
};

/** The check request a body of POST /v1/check asks. */
export function checkRequestOfBody(body: Omit<CheckRequestBody, 'consistency_token'>): CheckRequest {
  return {
    subject: { type: body.subject_type, id: body.subject_id, organisation_id: body.organisation_id },
    resource: { type: body.resource_type, id: body.resource_id },
    relation: body.relation,
  };
}

export const checkResultSchema = z
  .object({
    allowed: z.boolean(),
    subject: z.object({
      type: z.string(),
      id: z.string(),
      organisation_id: z.string().optional(),
    }),
    object: z.object({ type: z.string(), id: z.string() }),
    relation: z.string(),
    checked_at: z
      .string()
      .optional()
      .meta({ description: 'ZedToken of the snapshot the check was evaluated at' }),
  })
  .meta({ id: 'CheckResult', description: 'Canonical names: aliases resolved, ids as given' });

export function checkResponseSchema(scheme: UrnScheme) {
  return resultEnvelopeSchema(scheme, checkResultSchema);
}

/** Every answer of POST /v1/check that is not a 200 carries this, so that no reader can take it for an allow. */
export const DENIED = Object.freeze({ allowed: false as const });

export const deniedProblemSchema = problemSchema
  .extend({ result: z.object({ allowed: z.literal(false) }) })
  .meta({ id: 'DeniedProblem', description: 'Error body of the check: always `result.allowed: false`' });
