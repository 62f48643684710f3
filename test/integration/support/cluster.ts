import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type { ControlPlaneInfo } from './control-plane-info.js';

export function controlPlane(): ControlPlaneInfo {
  return inject('controlPlane');
}

/** Admin access to the shared kube-apiserver (CRDs from crds/ installed). */
export function testKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(controlPlane().kubeconfigPath);
  return kubeConfig;
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
  await testKubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name, labels } } });
  return name;
}
