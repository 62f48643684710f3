import { uuidField } from '../../api/v1alpha1/field-schemas.js';

const userIdSchema = uuidField();

/**
 * Whether a caller id can be written as issuerId or revokedBy, which the CRD types as user UUIDs. An
 * application without a userId in its credential is known by its client id, which is not one.
 */
export function isUserId(id: string): boolean {
  return userIdSchema.safeParse(id).success;
}
