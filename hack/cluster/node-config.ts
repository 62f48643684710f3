import { join } from 'node:path';
import { repoRoot } from '../../dev/localplane/repo-root.js';

/**
 * The one-node cluster's fixed addresses and names. Everything runs inside a network namespace of its own
 * (hack/cluster/cluster.sh makes it), so these ranges and ports never meet the machine's own network.
 */
export const NODE_NAME = 'policy-grant-node';
/** The node's address: a dummy interface in the cluster's namespace; pods reach it through the bridge. */
export const NODE_IP = '10.254.0.2';
export const POD_SUBNET = '10.244.0.0/24';
/** kube-apiserver's default in dev/localplane (its serving certificate names 10.0.0.1, the first address). */
export const SERVICE_SUBNET = '10.0.0.0/24';
export const CLUSTER_DNS_IP = '10.0.0.10';
export const APISERVER_PORT = 6443;
/** The cgroup (in every hierarchy) that holds every pod: one subtree to empty and remove on teardown. */
export const CGROUP_ROOT = '/policy-grant-cluster';
export const CNI_NETWORK = 'policy-grant-cluster';
export const CNI_BIN_DIR = '/usr/lib/cni';
export const RUNC = '/usr/sbin/runc';
export const CONTAINERD = '/usr/bin/containerd';
export const CTR = '/usr/bin/ctr';
export const CONTAINERD_NAMESPACE = 'k8s.io';

/** Paths under the cluster's state folder. */
export function nodePaths(stateDir: string) {
  const containerd = join(stateDir, 'containerd');
  return {
    containerdConfig: join(containerd, 'config.toml'),
    containerdRoot: join(containerd, 'root'),
    containerdState: join(containerd, 'state'),
    containerdSocket: join(containerd, 'containerd.sock'),
    cniConfDir: join(stateDir, 'cni', 'net.d'),
    cniIpamDir: join(stateDir, 'cni', 'ipam'),
    kubeletRoot: join(stateDir, 'kubelet'),
    kubeletConfig: join(stateDir, 'kubelet-config.yaml'),
    kubeProxyConfig: join(stateDir, 'kube-proxy-config.yaml'),
    runtimeShim: join(repoRoot(), 'hack/cluster/runc-shim.sh'),
    images: join(stateDir, 'images'),
  };
}

export type NodePaths = ReturnType<typeof nodePaths>;

/** containerd 1.6's configuration (version 2): CRI on, every path under the state folder. */
export function containerdConfig(paths: NodePaths, sandboxImage: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${paths.containerdRoot}"
state = "${paths.containerdState}"
# A negative score needs CAP_SYS_RESOURCE, which the test machines lack.
oom_score = 0

[grpc]
  address = "${paths.containerdSocket}"

[plugins."io.containerd.internal.v1.opt"]
  path = "${paths.containerdRoot}/opt"

[${cri}]
  sandbox_image = "${sandboxImage}"
  # Pod network namespaces live under the state folder, so that teardown finds every one of them.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  BinaryName = "${paths.runtimeShim}"
  SystemdCgroup = false

[${cri}.cni]
  bin_dir = "${CNI_BIN_DIR}"
  conf_dir = "${paths.cniConfDir}"
`;
}

/** The CNI reference plugins: a bridge with host-local addresses, and portmap for hostPort. */
export function cniConfig(paths: NodePaths): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: POD_SUBNET }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: paths.cniIpamDir,
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/**
 * The kubelet's configuration. What this machine refuses is configured around, each with its reason:
 * - cgroups are v1 (hybrid): `failCgroupV1: false`, and the cgroupfs driver (no systemd runs here);
 * - no CAP_SYS_RESOURCE: `oomScoreAdj: 0` for the kubelet itself (the runtime shim clamps the pods');
 * - a shared build machine's disk is never "ours": image garbage collection off (the images were imported,
 *   none can be pulled again) and eviction only at the last percent.
 */
export function kubeletConfig(paths: NodePaths, caFile: string): string {
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      cgroupDriver: 'cgroupfs',
      failCgroupV1: false,
      cgroupRoot: CGROUP_ROOT,
      containerRuntimeEndpoint: `unix://${paths.containerdSocket}`,
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: caFile },
      },
      authorization: { mode: 'Webhook' },
      clusterDNS: [CLUSTER_DNS_IP],
      clusterDomain: 'cluster.local',
      resolvConf: '',
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      oomScoreAdj: 0,
      failSwapOn: false,
      protectKernelDefaults: false,
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: {
        'memory.available': '100Mi',
        'nodefs.available': '1%',
        'imagefs.available': '1%',
        'nodefs.inodesFree': '1%',
      },
      serializeImagePulls: false,
      staticPodPath: '',
    },
    null,
    2,
  );
}

/**
 * kube-proxy in iptables mode. In a network namespace that is not the machine's, the conntrack table's size
 * and timeouts are read-only: 0 leaves them as they are instead of failing to write them.
 */
export function kubeProxyConfig(kubeconfig: string): string {
  return JSON.stringify(
    {
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig },
      mode: 'iptables',
      clusterCIDR: POD_SUBNET,
      hostnameOverride: NODE_NAME,
      healthzBindAddress: '127.0.0.1:10256',
      metricsBindAddress: '127.0.0.1:10249',
      oomScoreAdj: 0,
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    },
    null,
    2,
  );
}
