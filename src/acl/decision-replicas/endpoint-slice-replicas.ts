import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeClient } from '../../kube/kube-client.js';
import { ENDPOINT_SLICE_RESOURCE } from '../../kube/core-resources.js';
import { kubeListWatch } from '../../kube/list-watch.js';
import { collectionPath } from '../../kube/paths.js';
import type { Logger } from '../../observability/logger.js';
import { Informer } from '../../runtime/informer.js';
import type { DecisionReplicas } from './decision-replicas.js';

/** The fields of a discovery.k8s.io/v1 EndpointSlice read here. */
export interface EndpointSlice extends KubernetesObject {
  addressType?: string;
  ports?: Array<{ name?: string; port?: number }> | null;
  endpoints?: Array<{ addresses?: string[]; conditions?: { ready?: boolean | null } }> | null;
}

export interface EndpointSliceReplicasOptions {
  kube: KubeClient;
  namespace: string;
  /** The decision service's Service: its EndpointSlices carry `kubernetes.io/service-name=<service>`. */
  service: string;
  /** The Service port's name (the chart's `http`), whose endpoint port the replicas serve on. */
  portName: string;
  logger?: Logger;
}

/**
 * The decision Service's Ready endpoints, as kube-proxy routes to them, followed by an informer on its
 * EndpointSlices (list and watch in the Service's namespace). Unknown until the first list arrived.
 */
export function endpointSliceReplicas(options: EndpointSliceReplicasOptions): DecisionReplicas {
  const informer = new Informer<EndpointSlice>({
    source: kubeListWatch<EndpointSlice>(
      options.kube,
      collectionPath(ENDPOINT_SLICE_RESOURCE, options.namespace),
    ),
    name: `endpointslices of service ${options.service}`,
    labelSelector: `kubernetes.io/service-name=${options.service}`,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return {
    ready: () => (informer.hasSynced() ? readyEndpoints(informer.list(), options.portName) : undefined),
    start: () => informer.start(),
    stop: () => informer.stop(),
  };
}

/**
 * The base URLs of the slices' Ready endpoints on the named port. An endpoint without a `ready` condition counts
 * as Ready (the API's rule); a terminating one is not Ready. One URL per address, as each is a replica.
 */
export function readyEndpoints(slices: readonly EndpointSlice[], portName: string): string[] {
  const urls = new Set<string>();
  for (const slice of slices) {
    const port = slice.ports?.find((candidate) => (candidate.name ?? '') === portName)?.port;
    if (port === undefined) continue;
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      const [address] = endpoint.addresses ?? [];
      if (address !== undefined) urls.add(`http://${hostOf(address, slice.addressType)}:${port}`);
    }
  }
  return [...urls].sort();
}

function hostOf(address: string, addressType: string | undefined): string {
  return addressType === 'IPv6' || address.includes(':') ? `[${address}]` : address;
}
