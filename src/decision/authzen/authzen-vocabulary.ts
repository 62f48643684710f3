import { HttpError } from '../../http/errors.js';
import { CheckRequestError } from '../../spicedb/registry.js';
import type { CanonicalCheck, CheckRequest, CheckRequestField, Registry } from '../../spicedb/registry.js';

/** An AuthZEN subject, resource and action as the check's registry reads them. */
export interface AuthzenTriple {
  subject: { type: string; id: string; properties?: { organisation_id?: string | undefined } | undefined };
  resource: { type: string; id: string };
  action: { name: string };
}

/** The AuthZEN field each field of the check request comes from: a 400 names the field the caller sent. */
const AUTHZEN_FIELDS: Record<CheckRequestField, string> = {
  subject_type: 'subject.type',
  subject_id: 'subject.id',
  organisation_id: 'subject.properties.organisation_id',
  resource_type: 'resource.type',
  resource_id: 'resource.id',
  relation: 'action.name',
};

/** The check's field names in `message` replaced by the AuthZEN ones. */
function inAuthzenWords(message: string): string {
  return message.replace(
    /\b(subject_type|subject_id|organisation_id|resource_type|resource_id)\b/g,
    (field) => AUTHZEN_FIELDS[field as CheckRequestField],
  );
}

/**
 * Runs a registry lookup; a request outside the vocabulary is a 400 naming the AuthZEN field (under `at`, e.g.
 * `evaluations[3].`), in the AuthZEN words.
 */
export function withinVocabulary<T>(at: string, lookUp: () => T): T {
  try {
    return lookUp();
  } catch (error) {
    if (error instanceof CheckRequestError) {
      throw new HttpError(
        'BadRequest',
        `${at}${AUTHZEN_FIELDS[error.field]}: ${inAuthzenWords(error.message)}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

/** The check request an AuthZEN subject, resource and action ask. */
export function checkRequestOf({ subject, resource, action }: AuthzenTriple): CheckRequest {
  return {
    subject_type: subject.type,
    subject_id: subject.id,
    ...(subject.properties?.organisation_id === undefined
      ? {}
      : { organisation_id: subject.properties.organisation_id }),
    resource_type: resource.type,
    resource_id: resource.id,
    relation: action.name,
  };
}

/** The canonical check of an AuthZEN evaluation; 400 naming the field (under `at`) outside the vocabulary. */
export function canonicalEvaluation(registry: Registry, triple: AuthzenTriple, at = ''): CanonicalCheck {
  return withinVocabulary(at, () => registry.canonicalise(checkRequestOf(triple)));
}
