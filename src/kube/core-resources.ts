import type { ResourceDescriptor } from '../api/v1alpha1/index.js';

// Descriptors of the built-in kinds the project reads and writes (its own kinds' are beside their API types).

const resource = (
  group: string,
  version: string,
  plural: string,
  namespaced: boolean,
): ResourceDescriptor => ({
  group,
  version,
  plural,
  namespaced,
});

export const NAMESPACE_RESOURCE = resource('', 'v1', 'namespaces', false);
export const SERVICE_ACCOUNT_RESOURCE = resource('', 'v1', 'serviceaccounts', true);
export const LEASE_RESOURCE = resource('coordination.k8s.io', 'v1', 'leases', true);
export const ENDPOINT_SLICE_RESOURCE = resource('discovery.k8s.io', 'v1', 'endpointslices', true);
export const EVENT_RESOURCE = resource('events.k8s.io', 'v1', 'events', true);
export const TOKEN_REVIEW_RESOURCE = resource('authentication.k8s.io', 'v1', 'tokenreviews', false);
export const CUSTOM_RESOURCE_DEFINITION_RESOURCE = resource(
  'apiextensions.k8s.io',
  'v1',
  'customresourcedefinitions',
  false,
);
