import { HttpError } from '../http/errors.js';
import { encodeObjectId, groupObjectId, InvalidObjectIdError } from '../spicedb/object-id.js';
import type { SubjectRef } from '../spicedb/client.js';
import type { CheckResourceType, CheckSubjectType, Registry } from '../spicedb/registry.js';

/**
 * What a check asks, in the registry's public vocabulary (docs/decision-service.md, "Request"): the body of
 * POST /v1/check and an AuthZEN evaluation each become one.
 */
export interface CheckRequest {
  /** `organisation_id`: required when the subject type is scoped by organisation (`group`); empty or absent otherwise. */
  subject: { type: string; id: string; organisation_id?: string | undefined };
  resource: { type: string; id: string };
  relation: string;
}

/** A field of a check request, by its path. */
export type CheckField =
  'subject.type' | 'subject.id' | 'subject.organisation_id' | 'resource.type' | 'resource.id' | 'relation';

/** What an API calls each field of the check request: its 400s name the field the caller sent. */
export type FieldNames = Readonly<Record<CheckField, string>>;

/** The fields named by their paths. */
const FIELD_PATHS: FieldNames = {
  'subject.type': 'subject.type',
  'subject.id': 'subject.id',
  'subject.organisation_id': 'subject.organisation_id',
  'resource.type': 'resource.type',
  'resource.id': 'resource.id',
  relation: 'relation',
};

/**
 * A check request outside the registry's vocabulary. `field` is the path of the field at fault; the problem is
 * told in the words of the API that received the request (`detail`), since it may name other fields too.
 */
export class CheckRequestError extends Error {
  override readonly name = 'CheckRequestError';

  constructor(
    readonly field: CheckField,
    private readonly problem: (names: FieldNames) => string,
  ) {
    super(problem(FIELD_PATHS));
  }

  /** `<field>: <problem>`, every field named as `names` names it: the detail of the 400. */
  detail(names: FieldNames): string {
    return `${names[this.field]}: ${this.problem(names)}`;
  }
}

/**
 * Runs a lookup of the vocabulary (canonicalCheck, relationNames); a request outside it is a 400 whose detail
 * names the field as `names` does, after `at` (e.g. `evaluations[3].`).
 */
export function withinVocabulary<T>(names: FieldNames, lookUp: () => T, at = ''): T {
  try {
    return lookUp();
  } catch (error) {
    if (error instanceof CheckRequestError) {
      throw new HttpError('BadRequest', `${at}${error.detail(names)}`, { cause: error });
    }
    throw error;
  }
}

/** The question a check asks SpiceDB, and the public names its result echoes. */
export interface CanonicalCheck {
  /** The canonical public names, echoed in the check result. */
  subject: { type: string; id: string; organisation_id?: string };
  object: { type: string; id: string };
  relation: string;
  /** What to ask SpiceDB: object ids already encoded. */
  spicedb: {
    resourceType: string;
    resourceId: string;
    permission: string;
    subjectType: string;
    subjectId: string;
    subjectRelation?: string;
  };
}

/** The canonical check of a request; CheckRequestError naming the field when it is outside the vocabulary. */
export function canonicalCheck(registry: Registry, request: CheckRequest): CanonicalCheck {
  const subjectType = subjectTypeOf(registry, request.subject.type);
  const subjectId = nonEmpty(request.subject.id, 'subject.id');
  const organisationId = organisationOf(request, subjectType);
  const resourceType = resourceTypeOf(registry, request.resource.type);
  const resourceId = nonEmpty(request.resource.id, 'resource.id');
  const permission = permissionOf(resourceType, request.relation);
  return {
    subject: {
      type: request.subject.type,
      id: subjectId,
      ...(organisationId === undefined ? {} : { organisation_id: organisationId }),
    },
    object: { type: resourceType.name, id: resourceId },
    relation: request.relation,
    spicedb: {
      resourceType: resourceType.objectType,
      resourceId: encodedOrFieldError('resource.id', () => encodeObjectId(resourceId)),
      permission,
      subjectType: subjectType.objectType,
      subjectId: encodedOrFieldError('subject.id', () =>
        organisationId === undefined ? encodeObjectId(subjectId) : groupObjectId(organisationId, subjectId),
      ),
      ...(subjectType.relation === undefined ? {} : { subjectRelation: subjectType.relation }),
    },
  };
}

/** The SpiceDB subject a canonical check asks about. */
export function spicedbSubject({ spicedb }: CanonicalCheck): SubjectRef {
  return {
    type: spicedb.subjectType,
    id: spicedb.subjectId,
    ...(spicedb.subjectRelation === undefined ? {} : { relation: spicedb.subjectRelation }),
  };
}

/** The public relation names of a resource type (or alias), in the registry's order. */
export function relationNames(registry: Registry, resourceType: string): string[] {
  return Object.keys(resourceTypeOf(registry, resourceType).relations);
}

function subjectTypeOf(registry: Registry, name: string): CheckSubjectType {
  return known(registry.checkSubjectType(name), 'subject.type', name, () => registry.checkSubjectTypeNames());
}

function organisationOf(request: CheckRequest, subjectType: CheckSubjectType): string | undefined {
  const organisationId = request.subject.organisation_id ?? '';
  const field = 'subject.organisation_id';
  const when = (names: FieldNames) => `when ${names['subject.type']} is "${request.subject.type}"`;
  if (subjectType.scopedByOrganisation) {
    return nonEmpty(organisationId, field, (names) => `is required ${when(names)}`);
  }
  if (organisationId !== '') {
    throw new CheckRequestError(field, (names) => `${names[field]} must be empty ${when(names)}`);
  }
  return undefined;
}

function resourceTypeOf(registry: Registry, name: string): CheckResourceType {
  return known(registry.checkResourceType(name), 'resource.type', name, () =>
    registry.checkResourceTypeNames(),
  );
}

/** A type the registry found; an unknown one is an error naming what is known. */
function known<T>(found: T | undefined, field: CheckField, name: string, knownNames: () => string[]): T {
  if (found !== undefined) return found;
  throw new CheckRequestError(
    field,
    (names) => `unknown ${names[field]} "${name}"; known: ${quotedList(knownNames())}`,
  );
}

function permissionOf({ name, relations }: CheckResourceType, relation: string): string {
  // Own properties only: names like `__proto__` are merely undefined relations.
  if (Object.hasOwn(relations, relation)) return relations[relation] as string;
  throw new CheckRequestError(
    'relation',
    (names) =>
      `relation "${relation}" is not defined on ${names['resource.type']} "${name}"; defined: ${quotedList(Object.keys(relations))}`,
  );
}

function nonEmpty(
  value: string,
  field: CheckField,
  requirement: (names: FieldNames) => string = () => 'must not be empty',
): string {
  if (value === '') throw new CheckRequestError(field, (names) => `${names[field]} ${requirement(names)}`);
  return value;
}

function encodedOrFieldError(field: CheckField, encode: () => string): string {
  try {
    return encode();
  } catch (error) {
    if (error instanceof InvalidObjectIdError) {
      throw new CheckRequestError(field, (names) => `${names[field]}: ${error.message}`);
    }
    throw error;
  }
}

function quotedList(names: Iterable<string>): string {
  return [...names].map((name) => `"${name}"`).join(', ');
}

/** The answer to a check: what was checked, canonical, and whether it is allowed. */
export interface CheckResult {
  allowed: boolean;
  subject: CanonicalCheck['subject'];
  object: CanonicalCheck['object'];
  relation: string;
  checked_at?: string;
}

/** A canonical check (and the caller's token) → result; throws HttpError (400, 503) for every non-answer. */
export type CanonicalCheckEvaluator = (
  check: CanonicalCheck,
  callerToken: string | undefined,
) => Promise<CheckResult>;
