import {
  ACCESS_REQUEST_PLURAL,
  AGENT_PLURAL,
  API_GROUP,
  API_VERSION,
  CATALOG_ITEM_PLURAL,
  GRANT_CLAIM_PLURAL,
  DELEGATION_PLURAL,
  MEMBERSHIP_PLURAL,
  POLICY_GRANT_PLURAL,
} from '../api/v1alpha1/index.js';

// Collection and object paths of the resources the ACL API reads and writes.

const GROUP_PATH = `/apis/${API_GROUP}/${API_VERSION}`;

export const paths = {
  /** The API group's discovery document: answers once the CRDs are served. */
  apiGroup: GROUP_PATH,
  allPolicyGrants: `${GROUP_PATH}/${POLICY_GRANT_PLURAL}`,
  catalogItems: `${GROUP_PATH}/${CATALOG_ITEM_PLURAL}`,
  namespaces: '/api/v1/namespaces',
  policyGrants: (namespace: string) => `${GROUP_PATH}/namespaces/${namespace}/${POLICY_GRANT_PLURAL}`,
  policyGrant: (namespace: string, name: string) =>
    `${GROUP_PATH}/namespaces/${namespace}/${POLICY_GRANT_PLURAL}/${name}`,
  memberships: (namespace: string) => `${GROUP_PATH}/namespaces/${namespace}/${MEMBERSHIP_PLURAL}`,
  membership: (namespace: string, name: string) =>
    `${GROUP_PATH}/namespaces/${namespace}/${MEMBERSHIP_PLURAL}/${name}`,
  grantClaims: (namespace: string) => `${GROUP_PATH}/namespaces/${namespace}/${GRANT_CLAIM_PLURAL}`,
  grantClaim: (namespace: string, name: string) =>
    `${GROUP_PATH}/namespaces/${namespace}/${GRANT_CLAIM_PLURAL}/${name}`,
  delegations: (namespace: string) => `${GROUP_PATH}/namespaces/${namespace}/${DELEGATION_PLURAL}`,
  delegation: (namespace: string, name: string) =>
    `${GROUP_PATH}/namespaces/${namespace}/${DELEGATION_PLURAL}/${name}`,
  agents: (namespace: string) => `${GROUP_PATH}/namespaces/${namespace}/${AGENT_PLURAL}`,
  agent: (namespace: string, name: string) => `${GROUP_PATH}/namespaces/${namespace}/${AGENT_PLURAL}/${name}`,
  accessRequests: (namespace: string) => `${GROUP_PATH}/namespaces/${namespace}/${ACCESS_REQUEST_PLURAL}`,
  accessRequest: (namespace: string, name: string) =>
    `${GROUP_PATH}/namespaces/${namespace}/${ACCESS_REQUEST_PLURAL}/${name}`,
};
