import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createCertificateAuthority,
  type CertificateAuthority,
  type PemPair,
} from '../../dev/localplane/certificates.js';
import { startEtcd } from '../../dev/localplane/etcd.js';
import {
  flagArgs,
  startKubeApiserver,
  writeApiserverCredentials,
} from '../../dev/localplane/kube-apiserver.js';
import { writeKubeconfig } from '../../dev/localplane/kubeconfig.js';
import { startHealthyProcess, type ManagedProcess } from '../../dev/localplane/managed-process.js';
import { parseExports } from '../../dev/localplane/tool-paths.js';
import { repoRoot } from '../../dev/localplane/repo-root.js';
import {
  APISERVER_PORT,
  CGROUP_ROOT,
  CONTAINERD,
  CONTAINERD_NAMESPACE,
  CTR,
  NODE_IP,
  NODE_NAME,
  cniConfig,
  containerdConfig,
  kubeProxyConfig,
  kubeletConfig,
  nodePaths,
  type NodePaths,
} from './node-config.js';

const run = promisify(execFile);

export interface ClusterTools {
  etcd: string;
  kubeApiserver: string;
  kubectl: string;
  helm: string;
  spicedb: string;
  nodeBinDir: string;
  coredns: string;
  pause: string;
}

export interface NodeCluster {
  kubeconfigPath: string;
  stop(): Promise<void>;
}

/** Builds (once) and finds the cluster's pinned tools: hack/tools/env.sh cluster. */
export async function resolveClusterTools(): Promise<ClusterTools> {
  const child = run('bash', [join(repoRoot(), 'hack/tools/env.sh'), 'cluster'], { maxBuffer: 1 << 20 });
  child.child.stderr?.pipe(process.stderr);
  const exported = parseExports((await child).stdout);
  const get = (name: string) => {
    const value = exported[name];
    if (!value) throw new Error(`hack/tools/env.sh cluster did not export ${name}`);
    return value;
  };
  return {
    etcd: join(get('KUBEBUILDER_ASSETS'), 'etcd'),
    kubeApiserver: join(get('KUBEBUILDER_ASSETS'), 'kube-apiserver'),
    kubectl: get('KUBECTL_BIN'),
    helm: get('HELM_BIN'),
    spicedb: get('SPICEDB_BIN'),
    nodeBinDir: get('KUBE_NODE_BIN_DIR'),
    coredns: get('COREDNS_BIN'),
    pause: get('PAUSE_BIN'),
  };
}

export interface NodeClusterOptions {
  stateDir: string;
  tools: ClusterTools;
  /** The image the pod sandboxes run (imported with the others before the kubelet starts). */
  sandboxImage: string;
  log: (message: string) => void;
}

/**
 * A real one-node Kubernetes inside the caller's network namespace: etcd and kube-apiserver as the local
 * control plane starts them (with a node's flags), kube-controller-manager, kube-scheduler, containerd (through
 * the test harness's runtime shim), the kubelet and kube-proxy. The images in `<stateDir>/images/*.tar` are
 * imported before the kubelet starts. A start that fails stops what it started.
 */
export async function startNodeCluster(options: NodeClusterOptions): Promise<NodeCluster> {
  const { stateDir, tools, log } = options;
  const paths = nodePaths(stateDir);
  const started: ManagedProcess[] = [];
  const stop = async () => {
    for (const process of started.reverse()) await process.stop();
  };
  try {
    const ca = await createCertificateAuthority('policy-grant-cluster-ca');
    const credentials = await writeApiserverCredentials(stateDir, ca);
    const kubeconfigs = await writeComponentKubeconfigs(stateDir, ca);
    log('starting etcd');
    const etcd = await startEtcd(tools.etcd, stateDir);
    started.push(etcd.process);
    log('starting kube-apiserver');
    const apiserver = await startKubeApiserver({
      binary: tools.kubeApiserver,
      stateDir,
      etcdUrl: etcd.clientUrl,
      ca,
      credentials,
      admin: kubeconfigs.adminIdentity,
      port: APISERVER_PORT,
      flags: {
        'bind-address': '0.0.0.0',
        'advertise-address': NODE_IP,
        'authorization-mode': 'Node,RBAC',
        'disable-admission-plugins': null,
        'enable-admission-plugins': 'NodeRestriction',
        'kubelet-client-certificate': kubeconfigs.apiserverKubeletClient.certificate,
        'kubelet-client-key': kubeconfigs.apiserverKubeletClient.key,
        'kubelet-preferred-address-types': 'InternalIP',
      },
    });
    started.push(apiserver.process);
    log('starting kube-controller-manager, kube-scheduler and containerd');
    started.push(
      ...(await Promise.all([
        startControllerManager(tools, stateDir, kubeconfigs.controllerManager, credentials),
        startScheduler(tools, stateDir, kubeconfigs.scheduler),
        startContainerd(paths, options.sandboxImage),
      ])),
    );
    log('importing the images into containerd');
    await importImages(paths);
    await ensureCgroupRoot();
    log('starting the kubelet and kube-proxy');
    started.push(await startKubelet(tools, stateDir, paths, kubeconfigs.kubelet, credentials.caCert));
    started.push(await startKubeProxy(tools, stateDir, paths, kubeconfigs.kubeProxy));
    return { kubeconfigPath: kubeconfigs.admin, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Client certificates signed by the cluster CA, each with the identity its default RBAC role binds. */
async function writeComponentKubeconfigs(stateDir: string, ca: CertificateAuthority) {
  const server = `https://127.0.0.1:${APISERVER_PORT}`;
  const write = async (name: string, identity: PemPair) => {
    const path = join(stateDir, name === 'admin' ? 'kubeconfig' : `kubeconfig-${name}`);
    await writeKubeconfig(path, server, ca.certificate, identity);
    return path;
  };
  const client = (commonName: string, organisations: string[] = []) =>
    ca.issue({ commonName, organisations, usage: 'client' });
  const adminIdentity = await client('admin', ['system:masters']);
  // kube-apiserver's identity towards the kubelet (logs, exec, port-forward), authorised by the webhook.
  const kubeletClient = await client('kube-apiserver-kubelet-client', ['system:masters']);
  const apiserverKubeletClient = {
    certificate: join(stateDir, 'apiserver-kubelet-client.crt'),
    key: join(stateDir, 'apiserver-kubelet-client.key'),
  };
  await writeFile(apiserverKubeletClient.certificate, kubeletClient.certificate);
  await writeFile(apiserverKubeletClient.key, kubeletClient.privateKey, { mode: 0o600 });
  return {
    adminIdentity,
    apiserverKubeletClient,
    admin: await write('admin', adminIdentity),
    controllerManager: await write('controller-manager', await client('system:kube-controller-manager')),
    scheduler: await write('scheduler', await client('system:kube-scheduler')),
    kubelet: await write('kubelet', await client(`system:node:${NODE_NAME}`, ['system:nodes'])),
    kubeProxy: await write('kube-proxy', await client('system:kube-proxy')),
  };
}

function startControllerManager(
  tools: ClusterTools,
  stateDir: string,
  kubeconfig: string,
  credentials: { caCert: string; saPrivateKey: string },
): Promise<ManagedProcess> {
  return startComponent(tools, stateDir, 'kube-controller-manager', 'https://127.0.0.1:10257/healthz', {
    kubeconfig,
    'authentication-kubeconfig': kubeconfig,
    'authorization-kubeconfig': kubeconfig,
    'bind-address': '127.0.0.1',
    'service-account-private-key-file': credentials.saPrivateKey,
    'root-ca-file': credentials.caCert,
    'use-service-account-credentials': 'true',
    // One node, one instance: no lease to wait for.
    'leader-elect': 'false',
    v: '1',
  });
}

function startScheduler(tools: ClusterTools, stateDir: string, kubeconfig: string): Promise<ManagedProcess> {
  return startComponent(tools, stateDir, 'kube-scheduler', 'https://127.0.0.1:10259/healthz', {
    kubeconfig,
    'authentication-kubeconfig': kubeconfig,
    'authorization-kubeconfig': kubeconfig,
    'bind-address': '127.0.0.1',
    'leader-elect': 'false',
    v: '1',
  });
}

async function startKubelet(
  tools: ClusterTools,
  stateDir: string,
  paths: NodePaths,
  kubeconfig: string,
  caFile: string,
): Promise<ManagedProcess> {
  await writeFile(paths.kubeletConfig, kubeletConfig(paths, caFile));
  return startComponent(tools, stateDir, 'kubelet', 'http://127.0.0.1:10248/healthz', {
    config: paths.kubeletConfig,
    kubeconfig,
    'root-dir': paths.kubeletRoot,
    'cert-dir': join(paths.kubeletRoot, 'pki'),
    'node-ip': NODE_IP,
    'hostname-override': NODE_NAME,
    v: '1',
  });
}

async function startKubeProxy(
  tools: ClusterTools,
  stateDir: string,
  paths: NodePaths,
  kubeconfig: string,
): Promise<ManagedProcess> {
  await writeFile(paths.kubeProxyConfig, kubeProxyConfig(kubeconfig));
  return startComponent(tools, stateDir, 'kube-proxy', 'http://127.0.0.1:10256/healthz', {
    config: paths.kubeProxyConfig,
    v: '1',
  });
}

function startComponent(
  tools: ClusterTools,
  stateDir: string,
  name: string,
  healthUrl: string,
  flags: Record<string, string>,
): Promise<ManagedProcess> {
  return startHealthyProcess(
    {
      name,
      command: join(tools.nodeBinDir, name),
      args: flagArgs(flags),
      logFile: join(stateDir, `${name}.log`),
    },
    () => answersOk(healthUrl),
    120_000,
  );
}

async function startContainerd(paths: NodePaths, sandboxImage: string): Promise<ManagedProcess> {
  await Promise.all(
    [paths.containerdRoot, paths.containerdState, paths.cniConfDir, paths.cniIpamDir].map((dir) =>
      mkdir(dir, { recursive: true }),
    ),
  );
  await writeFile(paths.containerdConfig, containerdConfig(paths, sandboxImage));
  await writeFile(join(paths.cniConfDir, '10-policy-grant.conflist'), cniConfig(paths));
  return startHealthyProcess(
    {
      name: 'containerd',
      command: CONTAINERD,
      args: ['--config', paths.containerdConfig],
      logFile: join(paths.containerdRoot, '..', 'containerd.log'),
    },
    async () => existsSync(paths.containerdSocket) && (await ctr(paths, ['version']).then(() => true)),
    60_000,
  );
}

function ctr(paths: NodePaths, args: string[]) {
  return run(CTR, ['--address', paths.containerdSocket, '--namespace', CONTAINERD_NAMESPACE, ...args], {
    maxBuffer: 16 << 20,
  });
}

async function importImages(paths: NodePaths): Promise<void> {
  const archives = (await readdir(paths.images)).filter((name) => name.endsWith('.tar'));
  if (archives.length === 0) throw new Error(`no image archives in ${paths.images}`);
  for (const archive of archives) await ctr(paths, ['images', 'import', join(paths.images, archive)]);
}

/**
 * The kubelet refuses a cgroup root that does not exist: make it in every v1 hierarchy (and the unified one of
 * the hybrid layout). A new cpuset cgroup has no CPUs or memory nodes until given its parent's.
 */
async function ensureCgroupRoot(): Promise<void> {
  const base = '/sys/fs/cgroup';
  for (const hierarchy of await readdir(base)) {
    const dir = join(base, hierarchy, CGROUP_ROOT);
    if (!existsSync(join(base, hierarchy, 'cgroup.procs'))) continue;
    await mkdir(dir, { recursive: true });
    if (hierarchy === 'cpuset') {
      for (const file of ['cpuset.cpus', 'cpuset.mems'])
        await writeFile(join(dir, file), await readFile(join(base, hierarchy, file)));
    }
  }
}

/** True when `url` answers 200; TLS unverified: the components serve self-signed health endpoints. */
function answersOk(url: string): Promise<boolean> {
  if (url.startsWith('http:'))
    return fetch(url, { signal: AbortSignal.timeout(2_000) }).then((response) => response.ok);
  return new Promise((resolve) => {
    const req = httpsRequest(url, { rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
