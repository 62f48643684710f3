import { randomUUID } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { collectionPath, KubeClient, NAMESPACE_RESOURCE } from '../../src/kube/index.js';
import { CATALOG_ITEM_KIND, CATALOG_ITEM_RESOURCE, GROUP_VERSION } from '../../src/api/v1alpha1/index.js';
import type { DevSigningKey } from '../../dev/tokens/dev-signing-key.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER } from '../../dev/tokens/dev-token.js';
import { startAclApi, type RunningAclApi } from '../../src/acl/acl-server.js';
import { until } from '../../dev/wait/until.js';

// The ACL API as the benchmarks run it: in process, on loopback, trusting the development signing key.

export interface BenchAclApiOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  key: DevSigningKey;
  databaseUrl: string;
  /** The item whose CatalogItem the API must have cached before it is used. */
  itemId: string;
  /** False: nothing is audited (bench:audit's baseline). */
  auditing?: boolean;
}

export async function startBenchAclApi(options: BenchAclApiOptions): Promise<RunningAclApi> {
  const api = await startAclApi(
    {
      port: 0,
      host: '127.0.0.1',
      basePath: '/v2',
      namespace: options.namespace,
      errorNamespace: 'dx',
      logLevel: 'silent',
      audit: { databaseUrl: options.databaseUrl, migrate: true },
      auth: { jwks: { file: options.key.jwksPath }, issuer: DEV_TOKEN_ISSUER, audience: DEV_TOKEN_AUDIENCE },
    },
    {
      kubeConfig: options.kubeConfig,
      ...(options.auditing === undefined ? {} : { auditing: options.auditing }),
    },
  );
  await until(() => api.cache.itemsWithId(options.itemId).length > 0, `item ${options.itemId} in the cache`);
  return api;
}

/** Creates the namespace `name`. */
export async function createNamespace(kubeConfig: KubeConfig, name: string): Promise<void> {
  const kube = new KubeClient(kubeConfig);
  const body = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
  await kube
    .call({ method: 'POST', path: collectionPath(NAMESPACE_RESOURCE), body })
    .finally(() => kube.close());
}

/** The CatalogItem `bench-item` of a fresh itemId; returns the itemId. */
export async function createBenchItem(
  kubeConfig: KubeConfig,
  owner: { ownerId: string; organisationId: string },
  accessTypes: string[],
): Promise<string> {
  const itemId = `urn:dx:item:bench-${randomUUID()}`;
  const kube = new KubeClient(kubeConfig);
  await kube.call({
    method: 'POST',
    path: collectionPath(CATALOG_ITEM_RESOURCE),
    body: {
      apiVersion: GROUP_VERSION,
      kind: CATALOG_ITEM_KIND,
      metadata: { name: 'bench-item' },
      spec: { itemId, itemType: 'DATABANK', ...owner, accessTypes },
    },
  });
  kube.close();
  return itemId;
}

/** One item of a POST /policy: an INDIVIDUAL grant of `api` on the item to a fresh user, until 2099. */
export function individualGrant(itemId: string) {
  return {
    policyType: 'INDIVIDUAL',
    userId: randomUUID(),
    itemId,
    itemType: 'DATABANK',
    expiryTime: '2099-01-01T00:00:00Z',
    constraints: { access: [{ accessType: 'api' }] },
  };
}
