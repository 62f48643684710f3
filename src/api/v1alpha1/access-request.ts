import type { V1ObjectMeta } from '@kubernetes/client-node';
import { z } from 'zod';
import { ConditionSchema } from './conditions.js';
import { withCrossFieldRules, type CrossFieldRule } from './cross-field-rules.js';
import { dateTimeField, itemIdField, typeNameField, uuidField } from './field-schemas.js';
import type { ACCESS_REQUEST_KIND, GROUP_VERSION } from './group-version.js';
import { ConstraintsSchema } from './policy-grant.js';

const MAX_PURPOSE_LENGTH = 1024;
const MAX_REASON_LENGTH = 1024;
/** An approval creates one grant today; room for one per access type. */
const MAX_POLICY_IDS = 10;

export const AccessRequestStateSchema = z
  .enum(['PENDING', 'APPROVED', 'REJECTED', 'WITHDRAWN', 'EXPIRED'])
  .describe(
    'PENDING until decided; APPROVED or REJECTED by the item owner or an org_admin of its organisation, ' +
      'WITHDRAWN by the consumer, EXPIRED when pending too long.',
  );
export type AccessRequestState = z.infer<typeof AccessRequestStateSchema>;

const AccessRequestSpecFieldsSchema = z
  .object({
    consumerId: uuidField().describe('UUID of the user who asks for access (the consumer).'),
    itemId: itemIdField().describe('Identifier of the catalog item access is asked for (URN-shaped).'),
    itemType: typeNameField().describe('Type of the item, for example DATABANK.'),
    access: ConstraintsSchema.shape.access.describe(
      'Kinds of access asked for, each accessType at most once.',
    ),
    expiryTime: dateTimeField().describe('When the grant asked for would expire (RFC 3339).'),
    purpose: z
      .string()
      .max(MAX_PURPOSE_LENGTH)
      .optional()
      .describe('Why the consumer asks, for the provider who decides.'),
  })
  .describe('What the consumer asks for: access of the listed types to one item until expiryTime.');

const accessRequestRules: readonly CrossFieldRule<
  Pick<z.output<typeof AccessRequestSpecFieldsSchema>, 'access'>
>[] = [
  {
    field: ['access'],
    message: 'each accessType may appear only once in access',
    reason: 'FieldValueInvalid',
    cel: 'self.access.all(a, self.access.exists_one(b, b.accessType == a.accessType))',
    holds: (spec) => new Set(spec.access.map((entry) => entry.accessType)).size === spec.access.length,
  },
];

export const AccessRequestSpecSchema = withCrossFieldRules(AccessRequestSpecFieldsSchema, accessRequestRules);
export type AccessRequestSpec = z.infer<typeof AccessRequestSpecSchema>;

/** A request as a consumer asks it (the ACL API's create body): the spec without consumerId, the caller. */
export const AccessRequestAskSchema = withCrossFieldRules(
  AccessRequestSpecFieldsSchema.omit({ consumerId: true }).describe(
    'What the caller asks for: access of the listed types to one item until expiryTime.',
  ),
  accessRequestRules,
);

export const AccessRequestStatusSchema = z
  .object({
    state: AccessRequestStateSchema.optional(),
    decidedBy: z
      .string()
      .max(256)
      .optional()
      .describe('Who moved the request out of PENDING: a user UUID, or the controller for EXPIRED.'),
    decidedAt: dateTimeField().optional().describe('When the request left PENDING.'),
    reason: z
      .string()
      .max(MAX_REASON_LENGTH)
      .optional()
      .describe('Why it was decided so, as the decider wrote it.'),
    policyIds: z
      .array(z.string().max(64).describe('The id (metadata.uid) of a PolicyGrant the approval created.'))
      .max(MAX_POLICY_IDS)
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .optional()
      .describe('The policies the approval created.'),
    conditions: z
      .array(ConditionSchema)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
      .optional()
      .describe('Observations of the request in the Kubernetes condition shape.'),
  })
  .describe('The decision on the request; written by the ACL API and, for expiry, the controller.');
export type AccessRequestStatus = z.infer<typeof AccessRequestStatusSchema>;

/** An AccessRequest object as the Kubernetes API serves it. */
export interface AccessRequest {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof ACCESS_REQUEST_KIND;
  metadata: V1ObjectMeta;
  spec: AccessRequestSpec;
  status?: AccessRequestStatus;
}

/** A request without a state (applied with kubectl, not yet seen by anyone) is pending. */
export function accessRequestState(request: Pick<AccessRequest, 'status'>): AccessRequestState {
  return request.status?.state ?? 'PENDING';
}

/** Names the PolicyGrants an approval created, so that a grant leads back to its request. */
export const ACCESS_REQUEST_LABEL = 'acl.policygrant.dev/access-request';
