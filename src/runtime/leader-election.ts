import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Registry as MetricsRegistry } from 'prom-client';
import { isConflict } from '../kube/api-error.js';
import type { Lease, LeaseClient, LeaseSpec } from '../kube/lease-client.js';
import { microTime } from '../kube/lease-client.js';
import { linkedTimeout } from '../kube/linked-timeout.js';
import { silentLogger } from './logger.js';
import type { Logger } from './logger.js';
import { gaugeOn } from './metric-registry.js';
import { jittered, monotonicNow, sleep } from './timing.js';

/** Writes of the release: the observed lease, then at most one re-read after a cancelled renewal landed. */
const RELEASE_ATTEMPTS = 2;

export type StoppedLeadingReason = 'lost' | 'released';

export interface LeaderElectionOptions {
  lease: LeaseClient;
  /** The Lease's name: the `name` label of leader_election_master_status, and in logs. */
  name: string;
  /** Default: hostname + '_' + a random UUID, as controller-runtime. */
  identity?: string;
  /** How long others wait, after the last renewal they saw, before taking the lease. Whole seconds. Default 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps failing to renew before it gives up leading. Default 10 s. */
  renewDeadlineMs?: number;
  /** Between attempts to acquire or renew. Default 2 s. */
  retryPeriodMs?: number;
  /** On `stop`, hand the lease back (empty holder, 1 s duration) so a successor takes over at once. Default true. */
  releaseOnCancel?: boolean;
  onStartedLeading?(): void;
  /** `lost`: renewal failed for renewDeadline (someone else may lead now); `released`: `stop` was called. */
  onStoppedLeading?(reason: StoppedLeadingReason): void;
  registry?: MetricsRegistry;
  logger?: Logger;
}

interface Campaign {
  abort: AbortController;
  /** Set by stepDown: the campaign ends as if renewals had failed. */
  steppedDown: boolean;
  done: Promise<void>;
}

/** client-go's JitterFactor for the retry period. */
const JITTER_FACTOR = 1.2;

function validate(leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number): void {
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new Error('leaseDuration must be greater than renewDeadline');
  }
  if (renewDeadlineMs <= JITTER_FACTOR * retryPeriodMs) {
    throw new Error(`renewDeadline must be greater than retryPeriod*${JITTER_FACTOR}`);
  }
  if (retryPeriodMs <= 0) {
    throw new Error('retryPeriod must be positive');
  }
  if (leaseDurationMs % 1000 !== 0) {
    throw new Error('leaseDuration must be whole seconds (Lease.spec.leaseDurationSeconds)');
  }
}

interface ObservedLease {
  lease: Lease;
  /** The spec as JSON, to notice any change of the record. */
  raw: string;
  /** Local monotonic time at which this record was first seen: expiry is judged from it, not from renewTime. */
  at: number;
}

/**
 * client-go's LeaseLock leader election: acquire the Lease when it is free or its holder has not renewed it
 * for leaseDurationSeconds (judged on the local clock from when the record last changed, so clocks need
 * not agree), renew it every retryPeriod, and give up leading when renewals fail for renewDeadline.
 * Writes are optimistic on resourceVersion: a 409 means someone else won.
 */
export class LeaderElector {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly logger: Logger;
  private readonly setStatusMetric: (leading: boolean) => void;
  private observed?: ObservedLease;
  private leading = false;
  /** Monotonic time until which the last successful acquire or renewal lets this replica act as leader. */
  private leaseValidUntil = 0;
  /** Identifies the current term of leadership: new each time this replica starts leading. */
  private term?: string;
  private campaign?: Campaign;

  constructor(private readonly options: LeaderElectionOptions) {
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    validate(this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    this.logger = (options.logger ?? silentLogger).child({ lease: options.name, identity: this.identity });
    const registry = options.registry;
    const status = registry
      ? gaugeOn(registry, {
          name: 'leader_election_master_status',
          help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
          labelNames: ['name'],
        })
      : undefined;
    this.setStatusMetric = (leading) => status?.set({ name: options.name }, leading ? 1 : 0);
    this.setStatusMetric(false);
  }

  /**
   * True while this replica leads and its last successful acquire or renewal started less than renewDeadline
   * ago: judged at the moment of the call, so a replica whose renewals stalled (an event-loop pause, a hung
   * request) stops counting as leader at the deadline even before its renew loop notices.
   */
  isLeader(): boolean {
    return this.leading && monotonicNow() < this.leaseValidUntil;
  }

  /** The current term of leadership (a new id each time this replica starts leading); undefined when not leading. */
  leadershipTerm(): string | undefined {
    return this.isLeader() ? this.term : undefined;
  }

  /** Campaigns for the lease, then keeps renewing it. May be called again after leadership was lost or stopped. */
  start(): void {
    if (this.campaign) {
      throw new Error('leader election is already running');
    }
    const campaign: Campaign = { abort: new AbortController(), steppedDown: false, done: Promise.resolve() };
    campaign.done = this.runCampaign(campaign);
    this.campaign = campaign;
  }

  /**
   * Gives up leading at once, without releasing the lease (someone else is known to act as leader): the
   * campaign ends as when renewals fail, `onStoppedLeading('lost')` is called. Does nothing when not leading.
   */
  stepDown(): void {
    const campaign = this.campaign;
    if (!campaign || !this.leading) {
      return;
    }
    campaign.steppedDown = true;
    this.leaseValidUntil = 0; // not leader from this moment, whatever the campaign still has in flight
    campaign.abort.abort();
  }

  /** Stops campaigning or renewing and, if leading, releases the lease (unless releaseOnCancel is false). */
  async stop(): Promise<void> {
    const campaign = this.campaign;
    if (!campaign) {
      return;
    }
    campaign.abort.abort();
    await campaign.done;
    if (this.campaign === campaign) {
      this.campaign = undefined;
    }
    if (!this.leading) {
      return;
    }
    if (this.options.releaseOnCancel ?? true) {
      await this.release();
    }
    this.setLeading(false);
    this.options.onStoppedLeading?.('released');
  }

  private async runCampaign(campaign: Campaign): Promise<void> {
    const { signal } = campaign.abort;
    const acquiredAt = await this.acquire(signal);
    if (acquiredAt === undefined) {
      return;
    }
    this.term = randomUUID();
    this.setLeading(true);
    this.logger.info({ term: this.term }, 'acquired lease; leading');
    this.options.onStartedLeading?.();
    await this.renewWhileLeading(signal, acquiredAt);
    if (signal.aborted && !campaign.steppedDown) {
      return;
    }
    this.logger.warn(
      {
        renewDeadlineMs: this.renewDeadlineMs,
        holder: this.observed?.lease.spec?.holderIdentity,
        steppedDown: campaign.steppedDown,
      },
      campaign.steppedDown ? 'stepped down; leadership lost' : 'could not renew lease; leadership lost',
    );
    this.campaign = undefined;
    this.setLeading(false);
    this.options.onStoppedLeading?.('lost');
  }

  /** Resolves with the monotonic start of the successful attempt, or undefined when aborted. */
  private async acquire(signal: AbortSignal): Promise<number | undefined> {
    while (!signal.aborted) {
      const attemptStart = monotonicNow();
      if (await this.attempt(signal, this.renewDeadlineMs)) {
        this.leaseValidUntil = attemptStart + this.renewDeadlineMs;
        return attemptStart;
      }
      await sleep(jittered(this.retryPeriodMs, JITTER_FACTOR), signal);
    }
    return undefined;
  }

  /**
   * Returns when renewals have failed for renewDeadline since the last success (measured from the start
   * of that successful attempt, the acquire's included, and on a monotonic clock, so an event-loop pause
   * counts), when another holder shows up in the lease, or when aborted.
   */
  private async renewWhileLeading(signal: AbortSignal, acquiredAt: number): Promise<void> {
    let lastRenewal = acquiredAt;
    while (!signal.aborted) {
      await sleep(this.retryPeriodMs, signal);
      const deadline = lastRenewal + this.renewDeadlineMs;
      for (;;) {
        const attemptStart = monotonicNow();
        if (signal.aborted || attemptStart >= deadline) {
          return;
        }
        if (await this.attempt(signal, deadline - attemptStart)) {
          lastRenewal = attemptStart;
          this.leaseValidUntil = attemptStart + this.renewDeadlineMs;
          break;
        }
        if (this.anotherHolderSeen()) {
          return;
        }
        await sleep(Math.min(this.retryPeriodMs, Math.max(0, deadline - monotonicNow())), signal);
      }
    }
  }

  private anotherHolderSeen(): boolean {
    const holder = this.observed?.lease.spec?.holderIdentity;
    return !!holder && holder !== this.identity;
  }

  /** One try, given up after `timeoutMs`. */
  private async attempt(parent: AbortSignal, timeoutMs: number): Promise<boolean> {
    const { signal, dispose } = linkedTimeout(parent, timeoutMs);
    try {
      return await this.tryAcquireOrRenew(signal);
    } finally {
      dispose();
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    try {
      const lease = await this.options.lease.get(signal);
      if (!lease) {
        this.observe(await this.options.lease.create(this.nextSpec(undefined), signal));
        return true;
      }
      if (this.heldByAnother(this.observe(lease))) {
        return false;
      }
      this.observe(await this.options.lease.update({ ...lease, spec: this.nextSpec(lease.spec) }, signal));
      return true;
    } catch (err) {
      if (isConflict(err)) {
        this.logger.debug('lease changed under us (409); someone else won this round');
      } else if (!signal.aborted || this.leading) {
        this.logger.warn({ err }, 'could not acquire or renew lease');
      }
      return false;
    }
  }

  /** Another holder whose lease has not expired, judged from when we first saw its current record. */
  private heldByAnother({ lease, at }: ObservedLease): boolean {
    const holder = lease.spec?.holderIdentity;
    if (!holder || holder === this.identity) {
      return false;
    }
    return at + (lease.spec?.leaseDurationSeconds ?? 0) * 1000 > monotonicNow();
  }

  private nextSpec(current: LeaseSpec | undefined): LeaseSpec {
    const now = microTime(new Date());
    const renewing = current?.holderIdentity === this.identity;
    const transitions = current?.leaseTransitions ?? 0;
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseDurationMs / 1000,
      acquireTime: renewing ? current?.acquireTime : now,
      renewTime: now,
      leaseTransitions: renewing || current === undefined ? transitions : transitions + 1,
    };
  }

  private observe(lease: Lease): ObservedLease {
    const raw = JSON.stringify(lease.spec ?? {});
    if (this.observed?.raw === raw) {
      this.observed.lease = lease;
    } else {
      this.observed = { lease, raw, at: monotonicNow() };
    }
    return this.observed;
  }

  /**
   * client-go's ReleaseOnCancel: empty holder and a 1 s duration, so the next candidate takes over at once. A
   * renewal cancelled by stop() may still have landed, leaving what this replica observed one version behind:
   * on a conflict the lease is read again and released if it is still this replica's.
   */
  private async release(): Promise<void> {
    const { signal, dispose } = linkedTimeout(undefined, this.renewDeadlineMs);
    try {
      let lease = this.observed?.lease;
      for (let attempt = 1; lease?.spec?.holderIdentity === this.identity; attempt++) {
        try {
          this.observe(await this.options.lease.update(this.released(lease), signal));
          this.logger.info('released lease');
          return;
        } catch (err) {
          if (!isConflict(err) || attempt === RELEASE_ATTEMPTS) throw err;
          lease = await this.options.lease.get(signal);
        }
      }
    } catch (err) {
      this.logger.warn({ err }, 'could not release lease; successors wait for it to expire');
    } finally {
      dispose();
    }
  }

  private released(lease: Lease): Lease {
    const now = microTime(new Date());
    const spec: LeaseSpec = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: lease.spec?.leaseTransitions ?? 0,
    };
    return { ...lease, spec };
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.setStatusMetric(leading);
  }
}
