import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { startHealthyProcess, type ManagedProcess } from './managed-process.js';

export interface Etcd {
  process: ManagedProcess;
  clientUrl: string;
}

/**
 * etcd on loopback, fsync off as envtest runs it (tests, not durability). The data folder is kept: started
 * again on the same `stateDir` (new ports), etcd serves the objects of the previous run.
 */
export async function startEtcd(binary: string, stateDir: string): Promise<Etcd> {
  const dataDir = join(stateDir, 'etcd-data');
  await mkdir(dataDir, { recursive: true });
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const clientUrl = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const process = await startHealthyProcess(
    {
      name: 'etcd',
      command: binary,
      args: [
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${clientUrl}`,
        `--advertise-client-urls=${clientUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      logFile: join(stateDir, 'etcd.log'),
    },
    () => etcdHealthy(clientUrl),
    60_000,
  );
  return { process, clientUrl };
}

async function etcdHealthy(clientUrl: string): Promise<boolean> {
  const response = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(2_000) });
  const body = (await response.json()) as { health?: string };
  return body.health === 'true';
}
