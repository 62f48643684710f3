import type { Registry } from '../../spicedb/registry.js';
import { canonicalCheck, withinVocabulary } from '../canonical-check.js';
import type { CanonicalCheck, CheckRequest, FieldNames } from '../canonical-check.js';

/** An AuthZEN subject, resource and action as the check's registry reads them. */
export interface AuthzenTriple {
  subject: { type: string; id: string; properties?: { organisation_id?: string | undefined } | undefined };
  resource: { type: string; id: string };
  action: { name: string };
}

/** The AuthZEN field each field of the check request comes from: a 400 names the field the caller sent. */
export const AUTHZEN_FIELDS: FieldNames = {
  'subject.type': 'subject.type',
  'subject.id': 'subject.id',
  'subject.organisation_id': 'subject.properties.organisation_id',
  'resource.type': 'resource.type',
  'resource.id': 'resource.id',
  relation: 'action.name',
};

/** The check request an AuthZEN subject, resource and action ask. */
export function checkRequestOf({ subject, resource, action }: AuthzenTriple): CheckRequest {
  return {
    subject: { type: subject.type, id: subject.id, organisation_id: subject.properties?.organisation_id },
    resource: { type: resource.type, id: resource.id },
    relation: action.name,
  };
}

/** The canonical check of an AuthZEN evaluation; 400 naming the field (under `at`) outside the vocabulary. */
export function canonicalEvaluation(registry: Registry, triple: AuthzenTriple, at = ''): CanonicalCheck {
  return withinVocabulary(AUTHZEN_FIELDS, () => canonicalCheck(registry, checkRequestOf(triple)), at);
}
