/** The Helm release the install suite runs against, as hack/chart-e2e.sh installed it. */
export interface Release {
  name: string;
  namespace: string;
  chart: string;
  helm: string;
  kubeconfig: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: the install suite runs from hack/chart-e2e.sh`);
  return value;
}

export function release(): Release {
  return {
    name: required('INSTALL_RELEASE'),
    namespace: required('INSTALL_NAMESPACE'),
    chart: required('INSTALL_CHART'),
    helm: required('HELM_BIN'),
    kubeconfig: required('KUBECONFIG'),
  };
}
