/** The API group and version of the project's custom resources, and the names Kubernetes knows them by. */
export const API_GROUP = 'acl.policygrant.dev';
export const API_VERSION = 'v1alpha1';
export const GROUP_VERSION = `${API_GROUP}/${API_VERSION}` as const;

export const POLICY_GRANT_KIND = 'PolicyGrant';
export const POLICY_GRANT_PLURAL = 'policygrants';

export const CATALOG_ITEM_KIND = 'CatalogItem';
export const CATALOG_ITEM_PLURAL = 'catalogitems';

export const MEMBERSHIP_KIND = 'Membership';
export const MEMBERSHIP_PLURAL = 'memberships';

export const GRANT_CLAIM_KIND = 'GrantClaim';
export const GRANT_CLAIM_PLURAL = 'grantclaims';
export const DELEGATION_KIND = 'Delegation';
export const DELEGATION_PLURAL = 'delegations';

export const AGENT_KIND = 'Agent';
export const AGENT_PLURAL = 'agents';

export const ACCESS_REQUEST_KIND = 'AccessRequest';
export const ACCESS_REQUEST_PLURAL = 'accessrequests';

/**
 * The controller's finalizer on grants, Memberships and Delegations: added before the first SpiceDB write for
 * the object, removed once its tuples are gone. The ACL API creates its grants with it.
 */
export const RELATIONSHIPS_FINALIZER = 'acl.policygrant.dev/relationships';

/** Where the API serves a kind: what every path to it is built from (src/kube/paths.ts). */
export interface ResourceDescriptor {
  /** Empty for the core group (`/api/v1`). */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

const namespacedResource = (plural: string): ResourceDescriptor => ({
  group: API_GROUP,
  version: API_VERSION,
  plural,
  namespaced: true,
});

export const POLICY_GRANT_RESOURCE = namespacedResource(POLICY_GRANT_PLURAL);
export const CATALOG_ITEM_RESOURCE: ResourceDescriptor = {
  group: API_GROUP,
  version: API_VERSION,
  plural: CATALOG_ITEM_PLURAL,
  namespaced: false,
};
export const MEMBERSHIP_RESOURCE = namespacedResource(MEMBERSHIP_PLURAL);
export const GRANT_CLAIM_RESOURCE = namespacedResource(GRANT_CLAIM_PLURAL);
export const DELEGATION_RESOURCE = namespacedResource(DELEGATION_PLURAL);
export const AGENT_RESOURCE = namespacedResource(AGENT_PLURAL);
export const ACCESS_REQUEST_RESOURCE = namespacedResource(ACCESS_REQUEST_PLURAL);

/** Whether the object (a grant, a Membership or a Delegation) holds the controller's finalizer. */
export function hasFinalizer(object: { metadata: { finalizers?: string[] } }): boolean {
  return (object.metadata.finalizers ?? []).includes(RELATIONSHIPS_FINALIZER);
}
