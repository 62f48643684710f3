import { KubeConfig } from '@kubernetes/client-node';

/**
 * The kubeconfig file at `path` when one is given (KUBECONFIG), else the in-cluster ServiceAccount, as kubectl
 * and controller-runtime resolve it. Takes the path explicitly, so that the development stack, the test
 * harnesses and the benchmarks point at their own cluster without touching `process.env`.
 */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (path) kubeConfig.loadFromFile(path);
  else kubeConfig.loadFromCluster();
  return kubeConfig;
}
