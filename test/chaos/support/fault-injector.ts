import type { KubeConfig } from '@kubernetes/client-node';
import { sleep } from '../../../dev/wait/sleep.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { kubeLeaseClient, type LeaseClient } from '../../../src/kube/lease-client.js';
import type { PauseMode } from '../../support/tcp-proxy.js';
import { until } from '../../../dev/wait/until.js';
import type { ControllerReplica, PartitionTarget } from './controller-replica.js';

export type Fault = { kind: 'kill' } | { kind: 'partition'; target: PartitionTarget; mode: PauseMode };

export const kill: Fault = { kind: 'kill' };
const partition = (target: PartitionTarget, mode: PauseMode): Fault => ({ kind: 'partition', target, mode });

/** Kills alternate with partitions of every kind: each proxy alone and both, healed late (hold) or lossy (drop). */
export const FAULT_PLAN: readonly Fault[] = [
  kill,
  partition('kube-apiserver', 'hold'),
  kill,
  partition('spicedb', 'hold'),
  kill,
  partition('both', 'drop'),
  kill,
  partition('kube-apiserver', 'drop'),
  kill,
  partition('spicedb', 'drop'),
  kill,
  partition('both', 'hold'),
];

export function describeFault(fault: Fault): string {
  return fault.kind === 'kill' ? 'SIGKILL' : `partition ${fault.target} (${fault.mode})`;
}

export interface FaultRecord {
  at: Date;
  replica: string;
  fault: Fault;
}

export interface FaultTimings {
  /** How long a partition lasts: longer than the lease, so that the other replica takes over. */
  partitionMs: number;
  /** From a killed replica's death to its restart. */
  restartAfterMs: number;
  /** Calm between two faults, for the churn to go on under one leader. */
  betweenMs: number;
}

const LEASE_POLL_MS = 250;
// Replicas restart under load (a heavily loaded run has seen 90 s pass without a leader): be patient.
const LEADER_TIMEOUT_MS = 180_000;

/** Follows the Lease's holder from outside, directly on the kube-apiserver; counts the changes of holder. */
export class LeaseWatcher {
  private readonly client: LeaseClient;
  private holder: string | undefined;
  private running = true;
  private loop: Promise<void> | undefined;
  failovers = 0;
  /** Every new holder, when it was first seen. */
  readonly history: { at: Date; holder: string }[] = [];

  constructor(kubeConfig: KubeConfig, namespace: string, name: string) {
    this.client = kubeLeaseClient(new KubeClient(kubeConfig), namespace, name);
  }

  get currentHolder(): string | undefined {
    return this.holder;
  }

  start(): void {
    this.loop = (async () => {
      while (this.running) {
        await this.poll();
        await sleep(LEASE_POLL_MS);
      }
    })();
  }

  private async poll(): Promise<void> {
    const holder = (await this.client.get())?.spec?.holderIdentity || undefined;
    if (holder === undefined || holder === this.holder) return;
    if (this.holder !== undefined) this.failovers += 1;
    this.holder = holder;
    this.history.push({ at: new Date(), holder });
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/** Injects the faults of a plan (FAULT_PLAN by default), in turn, into whichever replica leads at the time. */
export class FaultInjector {
  readonly records: FaultRecord[] = [];

  constructor(
    private readonly replicas: readonly ControllerReplica[],
    private readonly lease: LeaseWatcher,
    private readonly timings: FaultTimings,
    private readonly plan: readonly Fault[] = FAULT_PLAN,
  ) {}

  /** Injects faults while `shouldContinue(faultsSoFar)`; every replica is running when it returns. */
  async run(shouldContinue: (faults: number) => boolean): Promise<void> {
    while (shouldContinue(this.records.length)) {
      await sleep(this.timings.betweenMs);
      const leader = await this.leader();
      const fault = this.plan[this.records.length % this.plan.length] as Fault;
      this.records.push({ at: new Date(), replica: leader.name, fault });
      await this.inject(leader, fault);
    }
    await this.ensureAllRunning();
  }

  /** The running replica that holds the lease, once there is one (replicas that exited are started again). */
  async leader(): Promise<ControllerReplica> {
    let found: ControllerReplica | undefined;
    await until(
      async () => {
        await this.ensureAllRunning();
        found = this.replicas.find(
          (replica) => replica.isRunning() && replica.identity === this.lease.currentHolder,
        );
        return found !== undefined;
      },
      'a running replica to hold the lease',
      LEADER_TIMEOUT_MS,
      LEASE_POLL_MS,
    );
    return found as ControllerReplica;
  }

  healAll(): void {
    this.replicas.forEach((replica) => replica.heal());
  }

  private async inject(leader: ControllerReplica, fault: Fault): Promise<void> {
    if (fault.kind === 'kill') {
      await leader.kill();
      await sleep(this.timings.restartAfterMs);
      await leader.start();
      return;
    }
    leader.partition(fault.target, fault.mode);
    await sleep(this.timings.partitionMs);
    leader.heal();
  }

  /** A replica that lost its lease may exit by itself (as controller-runtime's do): start it again. */
  private async ensureAllRunning(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.ensureRunning()));
  }
}
