import type { V1ObjectMeta } from '@kubernetes/client-node';
import { z } from 'zod';
import {
  finalOnceSet,
  immutableField,
  withCrossFieldRules,
  withTransitionRules,
  type CrossFieldRule,
  type TransitionRule,
} from './cross-field-rules.js';
import {
  dateTimeField,
  itemIdField,
  MAX_TYPE_NAME_LENGTH,
  typeNameField,
  uuidField,
} from './field-schemas.js';
import type { GROUP_VERSION, POLICY_GRANT_KIND } from './group-version.js';
import { projectedStatusFields } from './status-fields.js';

/**
 * Bounds chosen so that one grant projects to at most 10 x 100 = 1000 relationships: SpiceDB's default
 * limit of updates per WriteRelationships call, so a grant's tuples can be written atomically. They
 * also bound the cost of the CEL rules, which the kube-apiserver estimates from maxItems.
 */
export const MAX_ACCESS_ENTRIES = 10;
export const MAX_ALLOWED_ORGS = 100;

/** A Kubernetes label value (the namespace binding's organisation) has at most 63 characters. */
const MAX_LABEL_VALUE_LENGTH = 63;

export const PolicyTypeSchema = z
  .enum(['INDIVIDUAL', 'GROUP'])
  .describe(
    'INDIVIDUAL grants access to one user (userId); GROUP grants it to the members of the organisations in constraints.subjects.allowedOrgIds.',
  );
export type PolicyType = z.infer<typeof PolicyTypeSchema>;

const AccessSchema = z
  .object({
    accessType: typeNameField().describe('Kind of access granted on the item, for example api, file or sub.'),
  })
  .describe('One kind of access that the grant gives.');

const SubjectsSchema = z
  .object({
    allowedOrgIds: z
      .array(uuidField().describe('UUID of an organisation whose members the grant covers.'))
      .min(1)
      .max(MAX_ALLOWED_ORGS)
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .describe('Organisations whose members the grant covers; required for GROUP grants.'),
  })
  .describe('Who the grant covers beyond userId; used with GROUP grants.');

export const ConstraintsSchema = z
  .object({
    access: z
      .array(AccessSchema)
      .min(1)
      .max(MAX_ACCESS_ENTRIES)
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .describe('Kinds of access the grant gives, each accessType at most once.'),
    subjects: SubjectsSchema.optional(),
  })
  .describe('What the grant allows and, for GROUP grants, whom it covers.');
export type Constraints = z.infer<typeof ConstraintsSchema>;

const PolicyGrantSpecFieldsSchema = z
  .object({
    policyType: PolicyTypeSchema,
    userId: uuidField().optional().describe('UUID of the consumer user; required for INDIVIDUAL grants.'),
    itemId: itemIdField().describe('Identifier of the catalog item the grant is on (URN-shaped).'),
    itemType: typeNameField().describe('Type of the item, for example DATABANK.'),
    expiryTime: dateTimeField().describe(
      'When the grant stops being usable (RFC 3339, for example 2027-01-31T00:00:00Z).',
    ),
    constraints: ConstraintsSchema,
    issuerId: uuidField().optional().describe('UUID of the user who created the grant; set by the ACL API.'),
    revokedAt: dateTimeField()
      .optional()
      .describe('When the grant was revoked (soft delete); set by DELETE /policy together with revokedBy.'),
    revokedBy: uuidField().optional().describe('UUID of the user who revoked the grant.'),
  })
  .describe('The grant: who gets which access to which item, until when.');

/** What the rules read; the request item schema below has these fields too. */
type RuleSubject = Pick<
  z.output<typeof PolicyGrantSpecFieldsSchema>,
  'policyType' | 'userId' | 'constraints'
>;

function accessTypesAreUnique(spec: RuleSubject): boolean {
  const accessTypes = spec.constraints.access.map((access) => access.accessType);
  return new Set(accessTypes).size === accessTypes.length;
}

/** The rules of a PolicyGrant spec that its schema alone cannot say: CEL and TypeScript side by side. */
export const policyGrantSpecRules: readonly CrossFieldRule<RuleSubject>[] = [
  {
    field: ['userId'],
    message: 'userId is required when policyType is INDIVIDUAL',
    reason: 'FieldValueRequired',
    cel: "self.policyType != 'INDIVIDUAL' || has(self.userId)",
    holds: (spec) => spec.policyType !== 'INDIVIDUAL' || spec.userId !== undefined,
  },
  {
    field: ['constraints', 'subjects', 'allowedOrgIds'],
    message: 'constraints.subjects.allowedOrgIds is required when policyType is GROUP',
    reason: 'FieldValueRequired',
    // The schema requires allowedOrgIds inside subjects, so having subjects is having allowedOrgIds.
    cel: "self.policyType != 'GROUP' || has(self.constraints.subjects)",
    holds: (spec) => spec.policyType !== 'GROUP' || spec.constraints.subjects !== undefined,
  },
  {
    field: ['constraints', 'access'],
    message: 'each accessType may appear only once in constraints.access',
    reason: 'FieldValueInvalid',
    cel: 'self.constraints.access.all(a, self.constraints.access.exists_one(b, b.accessType == a.accessType))',
    holds: accessTypesAreUnique,
  },
];

const RECREATE = 'create a new grant (and revoke this one) to change it';

/**
 * What an update of a PolicyGrant spec may not do: change whom and what the grant is about, or undo a revocation.
 * The policy id (metadata.uid) and the audit trail refer to one grant for its whole life, and a revoked grant's
 * claim on its (subject, item, access type) has been released, so reviving it could break the one-active-grant
 * rule.
 */
export const policyGrantTransitionRules: readonly TransitionRule[] = [
  immutableField('policyType', RECREATE),
  immutableField('userId', RECREATE),
  immutableField('itemId', RECREATE),
  immutableField('itemType', RECREATE),
  immutableField('issuerId', 'it names who created the grant'),
  finalOnceSet('revokedAt', 'a revocation cannot be undone or moved'),
  finalOnceSet('revokedBy', 'it names who revoked the grant'),
];

export const PolicyGrantSpecSchema = withTransitionRules(
  withCrossFieldRules(PolicyGrantSpecFieldsSchema, policyGrantSpecRules),
  policyGrantTransitionRules,
);
export type PolicyGrantSpec = z.infer<typeof PolicyGrantSpecSchema>;

/**
 * A grant as a client asks for it (the ACL API's create request item): the spec without the fields the
 * service sets (issuerId, revokedAt, revokedBy), which are dropped if sent. Same fields, same rules.
 */
export const PolicyGrantRequestItemSchema = withCrossFieldRules(
  PolicyGrantSpecFieldsSchema.omit({ issuerId: true, revokedAt: true, revokedBy: true }).describe(
    'One grant to create: who gets which access to which item, until when.',
  ),
  policyGrantSpecRules,
);
export type PolicyGrantRequestItem = z.infer<typeof PolicyGrantRequestItemSchema>;

export const PolicyGrantStateSchema = z
  .enum(['ACTIVE', 'DELETED', 'EXPIRED'])
  .describe('Derived state: DELETED once revoked, EXPIRED once past expiryTime (not revoked), else ACTIVE.');
export type PolicyGrantState = z.infer<typeof PolicyGrantStateSchema>;

/** SpiceDB object ids and subjects allow `[a-zA-Z0-9/_|\-=+]` and at most 1024 bytes (src/spicedb/object-id.ts). */
const spicedbReference = () => z.string().min(1).max(1100);

const ProjectedSchema = z
  .object({
    resource: spicedbReference().describe(
      'The SpiceDB object the tuples are on, `<object type>:<object id>`.',
    ),
    relations: z
      .array(z.string().min(1).max(64).describe('A SpiceDB relation on resource, e.g. `api_consumer`.'))
      .max(MAX_ACCESS_ENTRIES)
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .describe('The relations written, one per access type.'),
    subjects: z
      .array(spicedbReference().describe('A subject written, `user:<id>` or `organization:<id>#member`.'))
      .max(MAX_ALLOWED_ORGS)
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .describe('The subjects written, `user:<id>` or `organization:<id>#member`.'),
  })
  .describe(
    'The SpiceDB relationships last written for the grant (every relation with every subject, on resource), so that a new controller leader removes what an edited grant no longer gives. Absent when nothing is written.',
  );
export type ProjectedTuples = z.infer<typeof ProjectedSchema>;

export const PolicyGrantStatusSchema = z
  .object({
    ...projectedStatusFields('grant'),
    state: PolicyGrantStateSchema.optional(),
    relationships: z
      .int()
      .min(0)
      .meta({ format: 'int32' })
      .optional()
      .describe('Number of SpiceDB relationships written for the grant.'),
    projected: ProjectedSchema.optional(),
    access: z
      .string()
      .max(MAX_ACCESS_ENTRIES * (MAX_TYPE_NAME_LENGTH + 1))
      .optional()
      .describe(
        'The access types of spec.constraints.access, in their order, joined by commas (for example api,file): what the ACCESS column prints. Absent until the controller first writes the status.',
      ),
    namespaceBinding: z
      .string()
      .max(MAX_LABEL_VALUE_LENGTH)
      .optional()
      .describe(
        'What the namespace of the grant is bound to, as the verdict of the controller read it: the organisation id that the organisation label of the namespace names, <unbound> when it has none, or <acl-namespace> for the namespace of the ACL API, where grants count for the items of every organisation. Absent until the controller first writes the status.',
      ),
  })
  .describe('What the controller observed and did; written by the controller only.');
export type PolicyGrantStatus = z.infer<typeof PolicyGrantStatusSchema>;

/** A PolicyGrant object as the Kubernetes API serves it. */
export interface PolicyGrant {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof POLICY_GRANT_KIND;
  metadata: V1ObjectMeta;
  spec: PolicyGrantSpec;
  status?: PolicyGrantStatus;
}
