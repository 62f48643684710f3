import { KubeConfig } from '@kubernetes/client-node';

/** KUBECONFIG when set, else the in-cluster ServiceAccount, as kubectl and controller-runtime resolve it. */
export function loadKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}
