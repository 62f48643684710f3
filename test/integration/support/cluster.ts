import type { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { collectionPath, KubeClient, loadKubeConfig, NAMESPACE_RESOURCE } from '../../../src/kube/index.js';
import type { ControlPlaneInfo } from './control-plane-info.js';

export function controlPlane(): ControlPlaneInfo {
  return inject('controlPlane');
}

/** Admin access to the shared kube-apiserver (CRDs from crds/ installed). */
export function testKubeConfig(): KubeConfig {
  return loadKubeConfig(controlPlane().kubeconfigPath);
}

let adminClient: KubeClient | undefined;

/** The same admin access through the project's transport, one pool per test file. */
export function testKubeClient(): KubeClient {
  adminClient ??= new KubeClient(testKubeConfig());
  return adminClient;
}

/** The shared SpiceDB (memory datastore): isolate by unique object ids. */
export function testSpiceDB(): { endpoint: string; token: string } {
  const { spicedbEndpoint, spicedbToken } = controlPlane();
  return { endpoint: spicedbEndpoint, token: spicedbToken };
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** A fresh namespace for one test file or test, with optional labels. */
export async function createTestNamespace(
  prefix: string,
  labels: Record<string, string> = {},
): Promise<string> {
  const name = uniqueId(
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-')
      .slice(0, 40),
  );
  await testKubeClient().call({
    method: 'POST',
    path: collectionPath(NAMESPACE_RESOURCE),
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } },
  });
  return name;
}
