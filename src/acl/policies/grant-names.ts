import { createHash, randomBytes } from 'node:crypto';

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

/** JSON with object keys sorted at every level, so equal requests hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, child]) => child !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, child]) => `${JSON.stringify(key)}:${canonicalJson(child)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}
