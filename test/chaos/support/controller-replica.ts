import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { freePort } from '../../../dev/localplane/free-port.js';
import {
  startProcess,
  waitUntilHealthy,
  type ManagedProcess,
} from '../../../dev/localplane/managed-process.js';
import { repoRoot } from '../../../dev/localplane/repo-root.js';
import { TcpProxy, type PauseMode } from '../../support/tcp-proxy.js';

/** Which of a replica's connections a partition cuts. */
export type PartitionTarget = 'kube-apiserver' | 'spicedb' | 'both';

export interface ReplicaOptions {
  name: string;
  stateDir: string;
  /** The admin kubeconfig of the kube-apiserver the replica reaches through its proxy. */
  kubeconfigPath: string;
  spicedbEndpoint: string;
  /** The controller's environment; KUBECONFIG, SPICEDB_ENDPOINT and CONTROLLER_PORT are the replica's own. */
  env: Record<string, string>;
}

const STARTUP_TIMEOUT_MS = 120_000;

/** The kubeconfig at `path` with its server moved to `server`; TLS still names 127.0.0.1, as the proxy does. */
async function writeProxiedKubeconfig(path: string, target: string, server: string): Promise<void> {
  const config = yaml.load(await readFile(path, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  for (const { cluster } of config.clusters) cluster.server = server;
  await writeFile(target, yaml.dump(config), { mode: 0o600 });
}

function httpsHostPort(kubeconfig: string): string {
  const server = (yaml.load(kubeconfig) as { clusters: { cluster: { server: string } }[] }).clusters[0]
    ?.cluster.server;
  if (!server) throw new Error('kubeconfig has no cluster server');
  return new URL(server).host;
}

/**
 * One controller replica: the real entrypoint as a process of its own (started under setpriv --pdeathsig, so
 * it dies with the test), reaching the kube-apiserver and SpiceDB only through proxies the test can pause.
 */
export class ControllerReplica {
  private process: ManagedProcess | undefined;
  private url = '';
  /** The leader-election identity of the running process (a new one at every start). */
  identity: string | undefined;
  /** Every identity it had, one per start. */
  readonly identities: string[] = [];

  private constructor(
    private readonly options: ReplicaOptions,
    private readonly kubeProxy: TcpProxy,
    private readonly spicedbProxy: TcpProxy,
    private readonly kubeconfigPath: string,
  ) {}

  static async create(options: ReplicaOptions): Promise<ControllerReplica> {
    const kubeTarget = httpsHostPort(await readFile(options.kubeconfigPath, 'utf8'));
    const kubeProxy = await TcpProxy.start({ target: kubeTarget });
    const spicedbProxy = await TcpProxy.start({ target: options.spicedbEndpoint });
    const kubeconfigPath = join(options.stateDir, `${options.name}.kubeconfig`);
    await writeProxiedKubeconfig(options.kubeconfigPath, kubeconfigPath, `https://${kubeProxy.endpoint}`);
    return new ControllerReplica(options, kubeProxy, spicedbProxy, kubeconfigPath);
  }

  get name(): string {
    return this.options.name;
  }

  isRunning(): boolean {
    return this.process?.isRunning() ?? false;
  }

  /** Starts the process and waits until it answers and has told its identity. */
  async start(): Promise<void> {
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    this.identity = undefined;
    this.process = startProcess({
      name: this.options.name,
      command: process.execPath,
      args: ['--import', 'tsx', join(repoRoot(), 'src/cmd/controller.ts')],
      logFile: join(this.options.stateDir, `${this.options.name}.log`),
      env: {
        ...process.env,
        ...this.options.env,
        KUBECONFIG: this.kubeconfigPath,
        SPICEDB_ENDPOINT: this.spicedbProxy.endpoint,
        CONTROLLER_PORT: String(port),
      },
    });
    await waitUntilHealthy(this.process, () => this.readIdentity(), STARTUP_TIMEOUT_MS);
  }

  /** Starts it again if it is not running (killed, or exited by itself). */
  async ensureRunning(): Promise<void> {
    if (!this.isRunning()) await this.start();
  }

  /** SIGKILL: no lease release, no goodbye. */
  async kill(): Promise<void> {
    await this.process?.kill();
  }

  partition(target: PartitionTarget, mode: PauseMode): void {
    this.proxiesOf(target).forEach((proxy) => proxy.pause(mode));
  }

  heal(): void {
    this.proxiesOf('both').forEach((proxy) => proxy.resume());
  }

  async stop(): Promise<void> {
    await this.process?.kill();
    await Promise.all(this.proxiesOf('both').map((proxy) => proxy.close()));
  }

  private proxiesOf(target: PartitionTarget): TcpProxy[] {
    if (target === 'kube-apiserver') return [this.kubeProxy];
    if (target === 'spicedb') return [this.spicedbProxy];
    return [this.kubeProxy, this.spicedbProxy];
  }

  /** Readiness answers with the identity whether or not the replica is ready (a partitioned one is not). */
  private async readIdentity(): Promise<boolean> {
    const response = await fetch(`${this.url}/healthz/ready`);
    const body = (await response.json()) as { identity?: string };
    if (body.identity === undefined) return false;
    this.identity = body.identity;
    this.identities.push(body.identity);
    return true;
  }
}
