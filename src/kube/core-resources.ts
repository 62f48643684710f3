import type { ResourceDescriptor } from '../api/v1alpha1/index.js';

// Descriptors of the built-in kinds the project reads and writes (its own kinds' are beside their API types).

const core = (plural: string, namespaced: boolean): ResourceDescriptor => ({
  group: '',
  version: 'v1',
  plural,
  namespaced,
});

export const NAMESPACE_RESOURCE = core('namespaces', false);
export const SERVICE_ACCOUNT_RESOURCE = core('serviceaccounts', true);
export const CONFIG_MAP_RESOURCE = core('configmaps', true);
export const LEASE_RESOURCE: ResourceDescriptor = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  namespaced: true,
};
export const EVENT_RESOURCE: ResourceDescriptor = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  namespaced: true,
};
export const TOKEN_REVIEW_RESOURCE: ResourceDescriptor = {
  group: 'authentication.k8s.io',
  version: 'v1',
  plural: 'tokenreviews',
  namespaced: false,
};
export const CUSTOM_RESOURCE_DEFINITION_RESOURCE: ResourceDescriptor = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  namespaced: false,
};
