import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson } from '../../http/canonical-json.js';

// Names of the PolicyGrants the API creates. With an Idempotency-Key they are derived from the caller, the
// key and the item's position, so a retry names the same objects and finds them instead of creating more.

/** Label on every grant the API creates; kubectl-applied grants lack it. */
export const CREATED_BY_LABEL = 'acl.policygrant.dev/created-by';
export const CREATED_BY_ACL_API = 'acl-api';

/**
 * Whether the API made the grant. The label alone proves nothing (whoever applies a grant may write it): only in
 * the API's own namespace, where admission lets no one else set it, does it count.
 */
export function madeByAclApi(
  grant: { metadata: { namespace?: string; labels?: Record<string, string> } },
  aclNamespace: string,
): boolean {
  return (
    grant.metadata.namespace === aclNamespace &&
    grant.metadata.labels?.[CREATED_BY_LABEL] === CREATED_BY_ACL_API
  );
}
/** SHA-256 of the create request (canonical JSON) that made a grant under an Idempotency-Key. */
export const REQUEST_HASH_ANNOTATION = 'acl.policygrant.dev/request-hash';

const NAME_HEX_DIGITS = 40;

export function idempotentGrantName(callerId: string, idempotencyKey: string, index: number): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([callerId, idempotencyKey, index]))
    .digest('hex');
  return `pg-${digest.slice(0, NAME_HEX_DIGITS)}`;
}

export function randomGrantName(): string {
  return `pg-${randomBytes(NAME_HEX_DIGITS / 2).toString('hex')}`;
}

export function requestHash(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}
