import { writeFile } from 'node:fs/promises';
import yaml from 'js-yaml';
import type { PemPair } from './certificates.js';

const base64 = (pem: string) => Buffer.from(pem).toString('base64');

/** A kubeconfig for one user of the local API server, in the format kubectl and client-node read. */
export function kubeconfigYaml(
  server: string,
  caCertificate: string,
  user: PemPair,
  name = 'policy-grant-local',
): string {
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority-data': base64(caCertificate) } }],
    users: [
      {
        name,
        user: {
          'client-certificate-data': base64(user.certificate),
          'client-key-data': base64(user.privateKey),
        },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
  });
}

export async function writeKubeconfig(
  path: string,
  server: string,
  ca: string,
  user: PemPair,
): Promise<void> {
  await writeFile(path, kubeconfigYaml(server, ca, user), { mode: 0o600 });
}
