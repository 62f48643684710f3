import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../src/kube/kube-config.js';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createCertificateAuthority, type CertificateAuthority, type PemPair } from './certificates.js';
import { installCrds } from './crds.js';
import { startEtcd, type Etcd } from './etcd.js';
import { startKubeApiserver, writeApiserverCredentials, type KubeApiserver } from './kube-apiserver.js';
import { writeKubeconfig } from './kubeconfig.js';
import type { ManagedProcess } from './managed-process.js';
import { repoRoot } from './repo-root.js';
import { startSpiceDB, type SpiceDBDatastore, type SpiceDBServer } from './spicedb-server.js';
import { resolveToolPaths, type ToolPaths } from './tool-paths.js';

export interface LocalControlPlaneOptions {
  /** Holds certificates, data, logs and the kubeconfig. */
  stateDir: string;
  /** CRDs to install; default: the project's crds/ folder. */
  crdDir?: string;
  /** Also start SpiceDB (default true). */
  withSpiceDB?: boolean;
  /** SpiceDB's datastore (default memory). */
  spicedbDatastore?: SpiceDBDatastore;
  tools?: ToolPaths;
  log?: (message: string) => void;
}

export interface LocalControlPlane {
  readonly stateDir: string;
  readonly kubeconfigPath: string;
  readonly apiServerUrl: string;
  /** etcd's client URL (plain HTTP on loopback). */
  readonly etcdUrl: string;
  readonly tools: ToolPaths;
  readonly spicedb: SpiceDBServer | undefined;
  readonly logFiles: string[];
  /** etcd, kube-apiserver and SpiceDB as they run now (a restart of kube-apiserver makes a new process). */
  processes(): ManagedProcess[];
  kubeConfig(): KubeConfig;
  /** A kubeconfig for another identity (client certificate signed by the cluster CA). */
  writeUserKubeconfig(user: string, groups: string[]): Promise<string>;
  /** Stops and starts kube-apiserver on the same port with the same keys; etcd keeps the data. */
  restartKubeApiserver(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * etcd, kube-apiserver and (optionally) SpiceDB as local processes, as controller-runtime's envtest does.
 * Started again on the same `stateDir`, it keeps etcd's data and makes everything else anew: certificates,
 * keys, ports, kubeconfig, and SpiceDB's process (empty on the memory datastore; on PostgreSQL with the data
 * of its database). A start that fails stops what it started and leaves no kubeconfig behind.
 */
export async function startLocalControlPlane(options: LocalControlPlaneOptions): Promise<LocalControlPlane> {
  const log = options.log ?? (() => undefined);
  const stateDir = options.stateDir;
  const kubeconfigPath = join(stateDir, 'kubeconfig');
  await mkdir(stateDir, { recursive: true });
  await rm(kubeconfigPath, { force: true });
  const tools = options.tools ?? (await resolveToolPaths());
  const started: { etcd?: Etcd; apiserver?: KubeApiserver; spicedb?: SpiceDBServer } = {};
  const stop = async () => {
    await started.apiserver?.process.stop();
    await Promise.all([started.etcd?.process.stop(), started.spicedb?.process.stop()]);
  };
  try {
    const ca = await createCertificateAuthority('policy-grant-local-ca');
    const admin = await ca.issue({ commonName: 'admin', organisations: ['system:masters'], usage: 'client' });
    const credentials = await writeApiserverCredentials(stateDir, ca);
    log('starting etcd');
    started.etcd = await startEtcd(tools.etcd, stateDir);
    const apiserverOptions = {
      binary: tools.kubeApiserver,
      stateDir,
      etcdUrl: started.etcd.clientUrl,
      ca,
      credentials,
      admin,
    };
    log('starting kube-apiserver');
    // Both run to the end, so that a failure of one never leaves the other starting unseen.
    const [apiserverStart, spicedbStart] = await Promise.allSettled([
      startKubeApiserver(apiserverOptions),
      options.withSpiceDB === false
        ? undefined
        : startSpiceDB({ binary: tools.spicedb, stateDir, datastore: options.spicedbDatastore }),
    ]);
    started.apiserver = fulfilled(apiserverStart);
    started.spicedb = fulfilled(spicedbStart);
    const apiserver = valueOrThrow(apiserverStart);
    valueOrThrow(spicedbStart);
    await writeKubeconfig(kubeconfigPath, apiserver.url, ca.certificate, admin);
    const kubeConfig = () => loadKubeConfig(kubeconfigPath);
    log('installing CRDs');
    await installCrds(kubeConfig(), options.crdDir ?? join(repoRoot(), 'crds'));
    return {
      stateDir,
      kubeconfigPath,
      apiServerUrl: apiserver.url,
      etcdUrl: started.etcd.clientUrl,
      tools,
      spicedb: started.spicedb,
      logFiles: [started.etcd, started.apiserver, started.spicedb].flatMap((p) =>
        p ? [p.process.logFile] : [],
      ),
      processes: () =>
        [started.etcd, started.apiserver, started.spicedb].flatMap((p) => (p ? [p.process] : [])),
      kubeConfig,
      writeUserKubeconfig: (user, groups) =>
        writeUserKubeconfig(stateDir, started.apiserver as KubeApiserver, ca, user, groups),
      async restartKubeApiserver() {
        const port = started.apiserver?.port;
        await started.apiserver?.process.stop();
        started.apiserver = await startKubeApiserver({ ...apiserverOptions, port });
      },
      stop,
    };
  } catch (error) {
    await stop();
    await rm(kubeconfigPath, { force: true });
    throw error;
  }
}

function fulfilled<T>(result: PromiseSettledResult<T>): T | undefined {
  return result.status === 'fulfilled' ? result.value : undefined;
}

function valueOrThrow<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

async function writeUserKubeconfig(
  stateDir: string,
  apiserver: KubeApiserver,
  ca: CertificateAuthority,
  user: string,
  groups: string[],
): Promise<string> {
  const identity: PemPair = await ca.issue({ commonName: user, organisations: groups, usage: 'client' });
  const path = join(stateDir, `kubeconfig-${user.replace(/[^a-zA-Z0-9_-]/g, '_')}`);
  await writeKubeconfig(path, apiserver.url, ca.certificate, identity);
  return path;
}
