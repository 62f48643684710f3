export interface SpiceDBLivenessOptions {
  /** A cheap call on the Watch's connection (a minimize_latency check); resolves when SpiceDB answered it. */
  probe: () => Promise<unknown>;
  /** How recently SpiceDB must have answered on the connection. */
  windowMs: number;
  /** performance.now() of the Watch's last message, if any: as good an answer as the probe's. */
  lastWatchMessageAt: () => number | undefined;
  /** A monotonic clock in milliseconds. */
  now?: () => number;
}

/**
 * Whether SpiceDB answered on the Watch's connection lately. A Watch that stalls without breaking (a paused
 * network path, a peer that stopped reading) is still "current": nothing arrives, nothing fails, and a change
 * may be waiting behind the stall. So the revision barrier trusts its Watch, and the decision cache its memory,
 * only while SpiceDB answered within the window. A probe (one at a time) goes out whenever the last answer is
 * half the window old: from a timer while started, so that an idle service stays live, and from a lookup. A
 * probe counts from when it was sent: SpiceDB answered it after that, and every Watch message it sent before
 * its answer travelled ahead of it on the same connection.
 */
export class SpiceDBLiveness {
  private probeSentAt = Number.NEGATIVE_INFINITY;
  private probing = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: SpiceDBLivenessOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Probes from a timer too, a quarter of the window apart, until stop(). */
  start(): void {
    this.timer ??= setInterval(() => this.recent(), this.options.windowMs / 4).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** SpiceDB answered within the window; past half of it, a probe goes out. */
  recent(): boolean {
    const heardAt = Math.max(this.probeSentAt, this.options.lastWatchMessageAt() ?? Number.NEGATIVE_INFINITY);
    const age = this.now() - heardAt;
    if (age > this.options.windowMs / 2) this.probe();
    return age <= this.options.windowMs;
  }

  private probe(): void {
    if (this.probing) return;
    this.probing = true;
    const sentAt = this.now();
    this.options
      .probe()
      .then(
        () => {
          this.probeSentAt = Math.max(this.probeSentAt, sentAt);
        },
        () => undefined,
      )
      .finally(() => {
        this.probing = false;
      });
  }
}
