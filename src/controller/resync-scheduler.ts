import type { Logger } from '../observability/logger.js';
import type { GrantMetrics } from './controller-metrics.js';
import { ResyncCancelledError, type DriftResync, type ResyncReport } from './drift-resync.js';
import { FencedOffError } from './fenced-spicedb.js';

export interface ResyncSchedulerOptions {
  resync: Pick<DriftResync, 'run'>;
  periodMs: number;
  /** Whether this replica leads: only the leader resyncs. */
  isLeader(): boolean;
  /**
   * Whether the caches are fresh for this term (listed after its fence moved): a resync against empty caches
   * would delete everything, one against a cache older than the previous leader's last acts could write back
   * what it withdrew.
   */
  hasSynced(): boolean;
  /** Called when this replica starts leading, before its first resync. */
  onStartedLeading(): void;
  metrics: GrantMetrics;
  logger: Logger;
  /** How often leadership and cache sync are looked at. Default 500 ms. */
  pollMs?: number;
  /** After a failed run, the next one comes this soon, doubling per failure up to the period. Default 1 s. */
  retryBaseMs?: number;
}

/**
 * Runs the resync at once when this replica starts leading (another leader may have left things half done),
 * then every period, and whenever asked (after a SpiceDB outage). One at a time; a request that comes during
 * a run makes another run follow it. A run is cancelled when leadership is lost. A failed run is retried with
 * backoff rather than a period later: until a resync succeeds, drift may stay unrepaired.
 */
export class ResyncScheduler {
  private readonly pollMs: number;
  private readonly retryBaseMs: number;
  private failuresInARow = 0;
  private requested = false;
  private wake?: () => void;
  private lifetime?: AbortController;
  private running?: Promise<void>;
  private lastReport?: ResyncReport;

  constructor(private readonly options: ResyncSchedulerOptions) {
    this.pollMs = options.pollMs ?? 500;
    this.retryBaseMs = options.retryBaseMs ?? 1_000;
  }

  start(): void {
    if (this.lifetime) throw new Error('resync scheduler already started');
    this.lifetime = new AbortController();
    this.running = this.loop(this.lifetime.signal);
  }

  async stop(): Promise<void> {
    this.lifetime?.abort();
    this.wake?.();
    await this.running;
  }

  /** Asks for a resync as soon as possible (if this replica leads). */
  requestResync(): void {
    this.requested = true;
    this.wake?.();
  }

  get last(): ResyncReport | undefined {
    return this.lastReport;
  }

  private async loop(signal: AbortSignal): Promise<void> {
    let leading = false;
    let dueAt = 0;
    while (!signal.aborted) {
      const leadsNow = this.options.isLeader() && this.options.hasSynced();
      if (leadsNow && !leading) {
        this.options.onStartedLeading();
        dueAt = 0;
      }
      leading = leadsNow;
      if (leading && (this.requested || performance.now() >= dueAt)) {
        this.requested = false;
        await this.runOnce(signal);
        dueAt = performance.now() + this.untilNextRun();
        continue;
      }
      await this.nap(this.pollMs);
    }
  }

  private untilNextRun(): number {
    if (this.failuresInARow === 0) return this.options.periodMs;
    return Math.min(this.options.periodMs, this.retryBaseMs * 2 ** (this.failuresInARow - 1));
  }

  private async runOnce(signal: AbortSignal): Promise<void> {
    const { logger, metrics, resync } = this.options;
    try {
      this.lastReport = await resync.run(() => signal.aborted || !this.options.isLeader());
      this.failuresInARow = 0;
    } catch (err) {
      if (err instanceof ResyncCancelledError || err instanceof FencedOffError) {
        logger.info({ why: err.message }, 'resync cancelled (stopping or no longer leading)');
        return;
      }
      this.failuresInARow += 1;
      metrics.resyncFailed();
      logger.error({ err, retryInMs: this.untilNextRun() }, 'resync failed; retrying with backoff');
    }
  }

  private nap(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
