import { KubeConfig } from '@kubernetes/client-node';

/**
 * KUBECONFIG when set, else the in-cluster ServiceAccount, as kubectl and controller-runtime resolve it.
 * Takes the environment explicitly, so that the all-in-one development stack can point services at its
 * own cluster without touching `process.env`.
 */
export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (env.KUBECONFIG) kubeConfig.loadFromFile(env.KUBECONFIG);
  else kubeConfig.loadFromCluster();
  return kubeConfig;
}
