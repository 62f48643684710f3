import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

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

/** `helm upgrade` of the release to the working tree's chart with these arguments, waiting up to `timeout`. */
export async function upgradeRelease(args: readonly string[], timeout: string): Promise<void> {
  const { name, namespace, chart, helm, kubeconfig } = release();
  await run(helm, [
    'upgrade',
    name,
    chart,
    '--kubeconfig',
    kubeconfig,
    '--namespace',
    namespace,
    ...args,
    '--wait',
    '--timeout',
    timeout,
  ]);
}
