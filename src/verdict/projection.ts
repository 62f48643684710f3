import type { CatalogItemSpec, PolicyGrantSpec } from '../api/v1alpha1/index.js';
import type { Relationship } from '../spicedb/client.js';
import { encodeObjectId, InvalidObjectIdError } from '../spicedb/object-id.js';
import type { Registry } from '../spicedb/registry.js';
import { tupleKey, type TupleKey } from './tuple-key.js';

// The pure projection of the custom resources onto SpiceDB relationships (docs/architecture.md, "The
// relationship model").

/** The relation of an item's owners; `owner: user | organization` in schema.zed. */
export const OWNER_RELATION = 'owner';
/** The subject types of an item's owners: its owner user and its organisation. */
export const OWNER_SUBJECT_TYPES = { user: 'user', organisation: 'organization' } as const;

/** What of a grant cannot be projected, and why; a grant with any of these is not enforced. */
export type Unprojectable =
  | { kind: 'itemType'; itemType: string }
  | { kind: 'accessType'; accessType: string }
  | { kind: 'subject'; message: string }
  | { kind: 'id'; message: string };

export interface GrantProjection {
  /** One per access type and subject, without duplicates, each expiring at the grant's expiryTime. */
  relationships: Relationship[];
  unprojectable: Unprojectable[];
}

/** The subject ids of a grant: the user of an INDIVIDUAL grant, the allowed organisations of a GROUP grant. */
function subjectIds(spec: PolicyGrantSpec): string[] | Unprojectable {
  if (spec.policyType === 'INDIVIDUAL') {
    return spec.userId ? [spec.userId] : { kind: 'subject', message: 'an INDIVIDUAL grant needs userId' };
  }
  const organisations = spec.constraints.subjects?.allowedOrgIds ?? [];
  return organisations.length > 0
    ? organisations
    : { kind: 'subject', message: 'a GROUP grant needs constraints.subjects.allowedOrgIds' };
}

function encoded(id: string, what: string): string | Unprojectable {
  try {
    return encodeObjectId(id);
  } catch (error) {
    if (error instanceof InvalidObjectIdError) return { kind: 'id', message: `${what}: ${error.message}` };
    throw error;
  }
}

const isProblem = (value: unknown): value is Unprojectable =>
  typeof value === 'object' && value !== null && 'kind' in value;

/**
 * The relationships a grant gives when it is enforced, whatever its state: one per access type (relation
 * from the registry) and subject (`user:<userId>`, or `organization:<orgId>#member` per allowed organisation),
 * on `<item object type>:<encoded itemId>`, expiring at expiryTime. Duplicates (an organisation listed twice)
 * appear once: SpiceDB refuses a write that names one tuple twice.
 */
export function projectGrant(spec: PolicyGrantSpec, registry: Registry): GrantProjection {
  const unprojectable: Unprojectable[] = [];
  const usable = <T>(value: T | Unprojectable): value is T => {
    if (!isProblem(value)) return true;
    unprojectable.push(value);
    return false;
  };
  const relations = spec.constraints.access
    .map(({ accessType }) => registry.relationOfAccessType(accessType) ?? accessTypeProblem(accessType))
    .filter(usable);
  const ids = subjectIds(spec);
  const subjectObjectIds = (isProblem(ids) ? [ids] : ids.map((id) => encoded(id, 'subject id'))).filter(
    usable,
  );
  const objectType = registry.objectTypeOfItemType(spec.itemType) ?? itemTypeProblem(spec.itemType);
  const resourceId = encoded(spec.itemId, 'itemId');
  const subject = registry.subjectOfPolicyType(spec.policyType) ?? policyTypeProblem(spec.policyType);
  if (!usable(objectType) || !usable(resourceId) || !usable(subject))
    return { relationships: [], unprojectable };
  const expiresAt = new Date(Date.parse(spec.expiryTime));
  const relationships = new Map<TupleKey, Relationship>();
  for (const relation of relations) {
    for (const subjectId of subjectObjectIds) {
      const relationship: Relationship = {
        resource: { type: objectType, id: resourceId },
        relation,
        subject: {
          type: subject.subjectType,
          id: subjectId,
          ...(subject.subjectRelation ? { relation: subject.subjectRelation } : {}),
        },
        expiresAt,
      };
      relationships.set(tupleKey(relationship), relationship);
    }
  }
  return { relationships: [...relationships.values()], unprojectable };
}

const accessTypeProblem = (accessType: string): Unprojectable => ({ kind: 'accessType', accessType });
const itemTypeProblem = (itemType: string): Unprojectable => ({ kind: 'itemType', itemType });
const policyTypeProblem = (policyType: string): Unprojectable => ({
  kind: 'subject',
  message: `policy type ${policyType} has no subject in the registry`,
});

/** The keys of everything a grant could project: what it writes when enforced, and deletes otherwise. */
export function candidateTupleKeys(spec: PolicyGrantSpec, registry: Registry): TupleKey[] {
  return projectGrant(spec, registry).relationships.map(tupleKey);
}

/**
 * The owner relationships of a CatalogItem: `<object type>:<encoded itemId>#owner` for its owner user and its
 * organisation (no expiration). None when the item type is not in the registry or an id cannot be encoded.
 */
export function projectOwners(spec: CatalogItemSpec, registry: Registry): Relationship[] {
  const objectType = registry.objectTypeOfItemType(spec.itemType);
  const ids = [spec.itemId, spec.ownerId, spec.organisationId].map((id) => encoded(id, 'id'));
  const [resourceId, ownerId, organisationId] = ids;
  if (objectType === undefined || ids.some(isProblem)) return [];
  const resource = { type: objectType, id: resourceId as string };
  return [
    {
      resource,
      relation: OWNER_RELATION,
      subject: { type: OWNER_SUBJECT_TYPES.user, id: ownerId as string },
    },
    {
      resource,
      relation: OWNER_RELATION,
      subject: { type: OWNER_SUBJECT_TYPES.organisation, id: organisationId as string },
    },
  ];
}

/** A readable account of why a grant cannot be projected, for its status message. */
export function describeUnprojectable(problem: Unprojectable): string {
  switch (problem.kind) {
    case 'itemType':
      return `item type "${problem.itemType}" has no SpiceDB object type in the registry`;
    case 'accessType':
      return `access type "${problem.accessType}" has no relation in the registry`;
    case 'subject':
    case 'id':
      return problem.message;
  }
}
