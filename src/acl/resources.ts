import {
  ACCESS_REQUEST_RESOURCE,
  AGENT_RESOURCE,
  CATALOG_ITEM_RESOURCE,
  DELEGATION_RESOURCE,
  GRANT_CLAIM_RESOURCE,
  MEMBERSHIP_RESOURCE,
  POLICY_GRANT_RESOURCE,
  type ResourceDescriptor,
} from '../api/v1alpha1/index.js';
import { collectionPath, groupVersionPath, NAMESPACE_RESOURCE, objectPath } from '../kube/index.js';

// Collection and object paths of the resources the ACL API reads and writes, named for its callers; built by
// src/kube/paths.ts from the kinds' descriptors.

const inNamespace = (resource: ResourceDescriptor) => (namespace: string) =>
  collectionPath(resource, namespace);
const namedIn = (resource: ResourceDescriptor) => (namespace: string, name: string) =>
  objectPath(resource, { namespace, name });

export const paths = {
  /** The API group's discovery document: answers once the CRDs are served. */
  apiGroup: groupVersionPath(POLICY_GRANT_RESOURCE),
  allPolicyGrants: collectionPath(POLICY_GRANT_RESOURCE),
  catalogItems: collectionPath(CATALOG_ITEM_RESOURCE),
  namespaces: collectionPath(NAMESPACE_RESOURCE),
  policyGrants: inNamespace(POLICY_GRANT_RESOURCE),
  policyGrant: namedIn(POLICY_GRANT_RESOURCE),
  memberships: inNamespace(MEMBERSHIP_RESOURCE),
  membership: namedIn(MEMBERSHIP_RESOURCE),
  grantClaims: inNamespace(GRANT_CLAIM_RESOURCE),
  grantClaim: namedIn(GRANT_CLAIM_RESOURCE),
  delegations: inNamespace(DELEGATION_RESOURCE),
  delegation: namedIn(DELEGATION_RESOURCE),
  agents: inNamespace(AGENT_RESOURCE),
  agent: namedIn(AGENT_RESOURCE),
  accessRequests: inNamespace(ACCESS_REQUEST_RESOURCE),
  accessRequest: namedIn(ACCESS_REQUEST_RESOURCE),
};
