import { writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import type { CertificateAuthority, PemPair } from './certificates.js';
import { createSigningKeyPair } from './certificates.js';
import { freePort } from './free-port.js';
import { startHealthyProcess, type ManagedProcess } from './managed-process.js';

export interface KubeApiserver {
  process: ManagedProcess;
  url: string;
  port: number;
}

/** Paths of the files kube-apiserver serves and signs with. */
export interface ApiserverCredentials {
  caCert: string;
  servingCert: string;
  servingKey: string;
  saPublicKey: string;
  saPrivateKey: string;
}

export interface KubeApiserverOptions {
  binary: string;
  stateDir: string;
  etcdUrl: string;
  ca: CertificateAuthority;
  credentials: ApiserverCredentials;
  /** The admin identity used to probe readiness. */
  admin: PemPair;
  /** Reuse a port, e.g. to restart the API server where its clients expect it. */
  port?: number;
  /**
   * Flags that replace the envtest-style defaults by name (`null` drops one), e.g. for a real node's cluster:
   * an advertise address that pods reach, the ServiceAccount admission plugin back on.
   */
  flags?: Record<string, string | null>;
}

/**
 * kube-apiserver as envtest runs it: secure port on loopback, client certificates signed by our CA,
 * RBAC authorization, ServiceAccount token signing (so TokenRequest works), the ServiceAccount
 * admission plugin off (no controller-manager creates default ServiceAccounts here) and MutatingAdmissionPolicy
 * on (the chart's grant-requester policy needs it).
 */
export async function startKubeApiserver(options: KubeApiserverOptions): Promise<KubeApiserver> {
  const { stateDir, ca, credentials: files } = options;
  const port = options.port ?? (await freePort());
  const url = `https://127.0.0.1:${port}`;
  const process = await startHealthyProcess(
    {
      name: 'kube-apiserver',
      command: options.binary,
      args: flagArgs({
        'etcd-servers': options.etcdUrl,
        'bind-address': '127.0.0.1',
        'advertise-address': '127.0.0.1',
        'secure-port': String(port),
        'cert-dir': join(stateDir, 'apiserver-certs'),
        'tls-cert-file': files.servingCert,
        'tls-private-key-file': files.servingKey,
        'client-ca-file': files.caCert,
        'service-cluster-ip-range': '10.0.0.0/24',
        'service-account-issuer': 'https://kubernetes.default.svc.cluster.local',
        'service-account-key-file': files.saPublicKey,
        'service-account-signing-key-file': files.saPrivateKey,
        'authorization-mode': 'RBAC',
        'disable-admission-plugins': 'ServiceAccount',
        'allow-privileged': 'true',
        // MutatingAdmissionPolicy is beta and off by default in 1.35: the grant policies stamp the requester with it.
        'feature-gates': 'MutatingAdmissionPolicy=true',
        'runtime-config': 'admissionregistration.k8s.io/v1beta1=true',
        v: '1',
        ...options.flags,
      }),
      logFile: join(stateDir, 'kube-apiserver.log'),
    },
    () => apiserverReady(url, ca.certificate, options.admin),
    120_000,
  );
  return { process, url, port };
}

/** `--name=value` arguments, in the order given; a `null` value leaves the flag out. */
export function flagArgs(flags: Record<string, string | null>): string[] {
  return Object.entries(flags).flatMap(([name, value]) => (value === null ? [] : [`--${name}=${value}`]));
}

/**
 * Writes the CA certificate, a serving certificate signed by `ca` and a fresh ServiceAccount signing key pair.
 * Called once per start of the control plane: every file matches this start's CA, whatever an earlier run
 * left in `stateDir` (reusing a serving certificate signed by an earlier CA is what made restarts hang).
 */
export async function writeApiserverCredentials(
  stateDir: string,
  ca: CertificateAuthority,
): Promise<ApiserverCredentials> {
  const files = {
    caCert: join(stateDir, 'ca.crt'),
    servingCert: join(stateDir, 'apiserver.crt'),
    servingKey: join(stateDir, 'apiserver.key'),
    saPublicKey: join(stateDir, 'sa.pub'),
    saPrivateKey: join(stateDir, 'sa.key'),
  };
  const serving = await ca.issue({
    commonName: 'kube-apiserver',
    usage: 'server',
    ipAddresses: ['127.0.0.1', '10.0.0.1'],
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
  });
  const signing = await createSigningKeyPair();
  await Promise.all([
    writeFile(files.caCert, ca.certificate),
    writeFile(files.servingCert, serving.certificate),
    writeFile(files.servingKey, serving.privateKey, { mode: 0o600 }),
    writeFile(files.saPublicKey, signing.publicKey),
    writeFile(files.saPrivateKey, signing.privateKey, { mode: 0o600 }),
  ]);
  return files;
}

function apiserverReady(url: string, caCert: string, admin: PemPair): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      `${url}/readyz`,
      { ca: caCert, cert: admin.certificate, key: admin.privateKey, timeout: 2_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
