/**
 * Starts the one-node cluster in the current network namespace (hack/cluster/cluster.sh enters the cluster's),
 * imports the images built by build-images.ts, runs CoreDNS, writes `<stateDir>/ready` once the node and
 * CoreDNS are Ready, and stops everything it started on SIGINT or SIGTERM.
 * Usage: tsx hack/cluster/up.ts <stateDir>
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../dev/localplane/repo-root.js';
import { imageNames, imageVersions } from './images.js';
import { CLUSTER_DNS_IP, NODE_NAME } from './node-config.js';
import { resolveClusterTools, startNodeCluster } from './node-cluster.js';

const run = promisify(execFile);
const log = (message: string) => console.error(`[cluster] ${message}`);

const stateDir = process.argv[2];
if (!stateDir) throw new Error('usage: up.ts <stateDir>');
const ready = join(stateDir, 'ready');
await rm(ready, { force: true });
const started = Date.now();
const tools = await resolveClusterTools();
const names = imageNames(await imageVersions());
const cluster = await startNodeCluster({ stateDir, tools, sandboxImage: names.pause, log });
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  log('stopping the cluster');
  await rm(ready, { force: true });
  await cluster.stop();
  process.exit(code);
};
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
try {
  const kubectl = (...args: string[]) =>
    run(tools.kubectl, ['--kubeconfig', cluster.kubeconfigPath, ...args], { maxBuffer: 16 << 20 });
  await kubectl('wait', '--for=condition=Ready', `node/${NODE_NAME}`, '--timeout=180s');
  log('node Ready; starting CoreDNS');
  const manifest = (await readFile(join(repoRoot(), 'hack/cluster/coredns.yaml'), 'utf8'))
    .replaceAll('${COREDNS_IMAGE}', names.coredns)
    .replaceAll('${CLUSTER_DNS_IP}', CLUSTER_DNS_IP);
  const apply = kubectl('apply', '-f', '-');
  apply.child.stdin?.end(manifest);
  await apply;
  await kubectl('-n', 'kube-system', 'rollout', 'status', 'deployment/coredns', '--timeout=180s');
  await writeFile(ready, `${cluster.kubeconfigPath}\n`);
  log(
    `cluster Ready in ${Math.round((Date.now() - started) / 1000)} s; KUBECONFIG=${cluster.kubeconfigPath}`,
  );
} catch (error) {
  console.error(error);
  await stop(1);
}
