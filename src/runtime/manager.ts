import { randomUUID } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Registry as MetricsRegistry } from 'prom-client';
import type { KubeClient } from '../kube/kube-client.js';
import { Controller } from './controller.js';
import type { ControllerOptions } from './controller.js';
import { Informer } from './informer.js';
import type { InformerOptions } from './informer.js';
import { LeaderElector } from './leader-election.js';
import type { LeaderElectionOptions } from './leader-election.js';
import { kubeLeaseClient } from '../kube/lease-client.js';
import { kubeListWatch } from '../kube/list-watch.js';
import type { SelectorOptions } from '../kube/list-watch.js';
import { silentLogger } from './logger.js';
import type { Logger } from './logger.js';

export interface ManagerLeaderElection extends Pick<
  LeaderElectionOptions,
  'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'releaseOnCancel'
> {
  namespace: string;
  /** The Lease's name. */
  name: string;
}

export interface ManagerOptions {
  /** Lists, watches and the Lease go through it. */
  kube: KubeClient;
  registry: MetricsRegistry;
  logger?: Logger;
  /** Omitted: no election, controllers run as soon as the manager starts. */
  leaderElection?: ManagerLeaderElection;
  /** How long `stop` lets reconciles in flight finish. Default 30 s, as controller-runtime. */
  gracefulShutdownTimeoutMs?: number;
  /**
   * Called after leadership was lost and the controllers were stopped; the manager then campaigns again.
   * controller-runtime exits the process here: pass `() => process.exit(1)` for that.
   */
  onLeadershipLost?: () => void;
  /**
   * Applied by every informer to each object before it is cached (controller-runtime's
   * `cache.Options.DefaultTransform`), e.g. `stripForCache`.
   */
  defaultTransform?: <T extends KubernetesObject>(obj: T) => T;
}

export interface InformerSpec
  extends
    SelectorOptions,
    Pick<InformerOptions<KubernetesObject>, 'watchTimeoutSeconds' | 'stallTimeoutMs' | 'backoff'> {
  /** Collection path, e.g. `/api/v1/namespaces/ns/configmaps`. */
  path: string;
}

/** An informer's own transform replaces the manager's default (controller-runtime's `cache.Options.ByObject`). */
export type TypedInformerSpec<T> = InformerSpec & { transform?: (obj: T) => T };

export type ManagedControllerOptions<T extends KubernetesObject> = Omit<
  ControllerOptions<T>,
  'registry' | 'logger'
>;

const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;

/**
 * controller-runtime's manager: owns the informers (one per path and selectors, shared, running on every
 * replica), the controllers (running only while this replica leads) and the leader election.
 * Stop order: controllers (in-flight reconciles finish), then the lease is released, then the informers.
 */
export class Manager {
  private readonly informers = new Map<string, Informer<KubernetesObject>>();
  private readonly controllers: Controller<KubernetesObject>[] = [];
  private readonly elector?: LeaderElector;
  private readonly logger: Logger;
  private started = false;
  private stopping?: Promise<void>;
  /** Without election: the one term of this manager's life. */
  private readonly soleTerm = randomUUID();
  private readonly termHooks: ((signal: AbortSignal) => Promise<void>)[] = [];
  /** The term whose start (hooks, then caches listed again) is complete: its controllers run. */
  private preparedTerm?: string;
  private termStart?: AbortController;

  constructor(private readonly options: ManagerOptions) {
    this.logger = options.logger ?? silentLogger;
    const election = options.leaderElection;
    if (election) {
      this.elector = new LeaderElector({
        ...election,
        lease: kubeLeaseClient(options.kube, election.namespace, election.name),
        registry: options.registry,
        logger: this.logger,
        onStartedLeading: () => void this.beginTerm(),
        onStoppedLeading: (reason) => {
          this.termStart?.abort();
          if (reason === 'lost') {
            void this.handleLeadershipLost();
          }
        },
      });
    }
  }

  get identity(): string | undefined {
    return this.elector?.identity;
  }

  /**
   * The shared informer for `spec`; created (and started, if the manager runs) on first use, with that use's
   * transform (or the manager's default).
   */
  informer<T extends KubernetesObject>(spec: TypedInformerSpec<T>): Informer<T> {
    const id = JSON.stringify([spec.path, spec.labelSelector ?? '', spec.fieldSelector ?? '']);
    let informer = this.informers.get(id);
    if (!informer) {
      const { transform = this.options.defaultTransform, ...selection } = spec as InformerSpec & {
        transform?: (obj: KubernetesObject) => KubernetesObject;
      };
      informer = new Informer<KubernetesObject>({
        ...selection,
        name: spec.path,
        source: kubeListWatch(this.options.kube, spec.path),
        logger: this.logger,
        ...(transform ? { transform } : {}),
      });
      this.informers.set(id, informer);
      if (this.started) {
        informer.start();
      }
    }
    return informer as unknown as Informer<T>;
  }

  addController<T extends KubernetesObject>(options: ManagedControllerOptions<T>): Controller<T> {
    const controller = new Controller<T>({
      ...options,
      registry: this.options.registry,
      logger: this.logger,
    });
    this.controllers.push(controller as unknown as Controller<KubernetesObject>);
    if (this.started && this.leadsWithFreshCaches()) {
      this.launch(controller as unknown as Controller<KubernetesObject>);
    }
    return controller;
  }

  /** Starts the informers and the election (or, without election, the controllers); returns at once. */
  start(): void {
    if (this.started) {
      throw new Error('manager already started');
    }
    this.started = true;
    this.informers.forEach((informer) => informer.start());
    if (this.elector) {
      this.elector.start();
    } else {
      this.preparedTerm = this.soleTerm;
      this.startControllers();
    }
  }

  /**
   * Runs at the start of each term of leadership, before the caches are listed again and the controllers
   * start: e.g. fencing the previous leader out of the store the controllers write. A hook that fails is
   * retried by the hook itself; the term does not start its controllers until every hook resolved.
   */
  beforeEachTerm(hook: (signal: AbortSignal) => Promise<void>): void {
    this.termHooks.push(hook);
  }

  /**
   * Leads, and the caches were listed again after this term's hooks ran: every decision taken from them sees
   * at least what the API server held when the previous leader was fenced out. Without election: synced.
   */
  leadsWithFreshCaches(): boolean {
    const term = this.leadershipTerm();
    return term !== undefined && term === this.preparedTerm && this.hasSynced();
  }

  /** Graceful and idempotent: controllers, then the lease, then the informers. */
  stop(): Promise<void> {
    this.stopping ??= this.shutDown();
    return this.stopping;
  }

  /** All informers have listed once. For readiness. */
  hasSynced(): boolean {
    return [...this.informers.values()].every((informer) => informer.hasSynced());
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.informers.values()].map((informer) => informer.waitForSync(signal)));
  }

  /** True while this replica holds the lease (always, once started, without election). */
  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.started && this.stopping === undefined;
  }

  /** Identifies the current term of leadership (new each time this replica starts leading); undefined when not leading. */
  leadershipTerm(): string | undefined {
    if (this.elector) {
      return this.elector.leadershipTerm();
    }
    return this.isLeader() ? this.soleTerm : undefined;
  }

  /**
   * Gives up leadership at once, as if the lease had been lost (controllers stop with no grace,
   * `onLeadershipLost` is called): for when this replica learns that another one acts as leader. Without
   * election there is nobody to hand over to, and nothing happens.
   */
  stepDown(): void {
    this.elector?.stepDown();
  }

  /**
   * A term starts with its hooks (the fence), then a consistent list of every informer, then the controllers.
   * An informer's watch may lag the API server by as long as its connection is slow or cut; the previous
   * leader may meanwhile have acted on changes (deleted a grant's tuples and let the grant go) that this
   * replica's cache has not seen, and deciding from that cache would write back what was withdrawn. Listing
   * after the fence moved means the cache holds everything the previous leader could still act on.
   */
  private async beginTerm(): Promise<void> {
    const term = this.leadershipTerm();
    const start = new AbortController();
    this.termStart = start;
    try {
      for (const hook of this.termHooks) await hook(start.signal);
      await Promise.all([...this.informers.values()].map((informer) => informer.relistNow(start.signal)));
    } catch (err) {
      if (!start.signal.aborted) {
        this.logger.error({ err }, 'the term could not start; giving up leadership');
        this.stepDown();
      }
      return;
    }
    if (start.signal.aborted || this.leadershipTerm() !== term) return;
    this.preparedTerm = term;
    this.logger.info('caches listed again for the new term; starting controllers');
    this.startControllers();
  }

  private startControllers(): void {
    this.controllers.forEach((controller) => this.launch(controller));
  }

  private launch(controller: Controller<KubernetesObject>): void {
    if (this.stopping !== undefined) {
      return; // leadership came while shutting down
    }
    controller
      .start()
      .catch((err: unknown) =>
        this.logger.error({ err, controller: controller.name }, 'controller failed to start'),
      );
  }

  private async stopControllers(timeoutMs: number): Promise<void> {
    await Promise.all(this.controllers.map((controller) => controller.stop(timeoutMs)));
  }

  /** As controller-runtime: no grace once the lease may already belong to someone else. */
  private async handleLeadershipLost(): Promise<void> {
    await this.stopControllers(0);
    this.options.onLeadershipLost?.();
    if (this.stopping === undefined) {
      this.elector?.start();
    }
  }

  private async shutDown(): Promise<void> {
    this.termStart?.abort();
    await this.stopControllers(
      this.options.gracefulShutdownTimeoutMs ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
    );
    await this.elector?.stop();
    await Promise.all([...this.informers.values()].map((informer) => informer.stop()));
    this.logger.info('manager stopped');
  }
}
