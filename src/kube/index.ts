// The project's Kubernetes access layer (controller-runtime's client and cache wiring): one pooled transport,
// paths built from resource descriptors, status and finalizer writes, list-watch sources and Lease calls.
export {
  KubeApiError,
  KubernetesUnreachableError,
  isAlreadyExists,
  isConflict,
  isGone,
  isNotFound,
  isPreconditionConflict,
} from './api-error.js';
export type { ApiStatus } from './api-error.js';
export * from './core-resources.js';
export { KubeClient, MERGE_PATCH } from './kube-client.js';
export type { KubeCall, KubeClientOptions } from './kube-client.js';
export type { KubeMethod } from './kube-request.js';
export { loadKubeConfig } from './kube-config.js';
export { kubeLeaseClient, microTime } from './lease-client.js';
export type { Lease, LeaseClient, LeaseSpec } from './lease-client.js';
export { kubeListWatch } from './list-watch.js';
export type { ListWatchSource, SelectorOptions, WatchEvent } from './list-watch.js';
export { ObjectWriter } from './object-writer.js';
export { collectionPath, groupVersionPath, objectPath, refOf } from './paths.js';
export type { ObjectRef } from './paths.js';
