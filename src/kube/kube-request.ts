/** The method and query of a request to the kube-apiserver: what the transport sends and its span describes. */
export type KubeMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryParams = Record<string, string | number | boolean | undefined>;
