import type { V1ObjectMeta } from '@kubernetes/client-node';
import { z } from 'zod';
import { dateTimeField, itemIdField, LOWERCASE_UUID_PATTERN, typeNameField } from './field-schemas.js';
import type { GRANT_CLAIM_KIND, GROUP_VERSION } from './group-version.js';

// The ACL API's bookkeeping for its 409 rule (docs/acl-grants.md, "Create: the 409 without races"): one object
// per (subject, item, access type), named after the triple, in the ACL API's namespace. Not for users.

/** The longest Kubernetes object name (a DNS subdomain). */
const MAX_OBJECT_NAME_LENGTH = 253;

const CLAIM_SUBJECT = new RegExp(`^(user|organization):${LOWERCASE_UUID_PATTERN}$`);

export const GrantClaimStateSchema = z
  .enum(['pending', 'bound'])
  .describe(
    'pending: the grant is being created (or its creator died before it finished); bound: the grant was created and its creator confirmed the claim.',
  );
export type GrantClaimState = z.infer<typeof GrantClaimStateSchema>;

export const GrantClaimSpecSchema = z
  .object({
    subject: z
      .string()
      .regex(CLAIM_SUBJECT, { error: 'Invalid subject: expected user:<uuid> or organization:<uuid>' })
      .describe(
        'Who the claimed access is for: user:<uuid> (an INDIVIDUAL grant) or organization:<uuid> (the members of an organisation of a GROUP grant).',
      ),
    itemId: itemIdField().describe('The item the claimed access is on.'),
    accessType: typeNameField().describe('The claimed access type.'),
    grantName: z
      .string()
      .min(1)
      .max(MAX_OBJECT_NAME_LENGTH)
      .describe('Name of the PolicyGrant, in this namespace, that holds the claim.'),
    state: GrantClaimStateSchema,
    pendingSince: dateTimeField().describe('When the claim became pending for grantName (RFC 3339).'),
  })
  .describe('The (subject, item, access type) claimed, and the grant that holds it.');
export type GrantClaimSpec = z.infer<typeof GrantClaimSpecSchema>;

/** A GrantClaim object as the Kubernetes API serves it (namespaced, no status). */
export interface GrantClaim {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof GRANT_CLAIM_KIND;
  metadata: V1ObjectMeta;
  spec: GrantClaimSpec;
}
