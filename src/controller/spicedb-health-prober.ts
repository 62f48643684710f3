import type { Logger } from '../observability/logger.js';
import { SpiceDBUnavailableError, type SpiceDBError } from '../spicedb/errors.js';
import { FencedOffError } from './fenced-spicedb.js';
import type { HealthProbe } from './relationship-store.js';

export interface SpiceDBHealthProberOptions {
  store: HealthProbe;
  /** Writes the schema when SpiceDB's differs (FencedSpiceDB.ensureSchema: refused unless leading). */
  ensureSchema(): Promise<{ written: boolean }>;
  /** Only the leader writes the schema; other replicas only probe. */
  isLeader(): boolean;
  /** Between probes. */
  periodMs: number;
  /**
   * SpiceDB came back from an outage, or lost its schema (a memory datastore restarts empty) and got it
   * written again: its tuples may be gone or older than the caches. The schema is in place when this runs.
   */
  onRecovered(why: 'outage' | 'schema-lost'): void;
  logger: Logger;
}

type Health = 'unknown' | 'available' | 'unavailable';

/**
 * Keeps SpiceDB usable for the controller: probes SpiceDB periodically (and at once when a call failed); on
 * the leader, writes the schema when SpiceDB's differs or is gone (a replica that starts leading writes it
 * before its first write, see FencedSpiceDB); and reports recoveries so that the controller can rewrite what
 * SpiceDB may have lost.
 */
export class SpiceDBHealthProber {
  private health: Health = 'unknown';
  private timer?: NodeJS.Timeout;
  private probing?: Promise<void>;
  private stopped = false;
  /** Whether this process ever found SpiceDB without its schema, or saw it come back from an outage. */
  private disrupted = false;
  /** A loss of the schema was reported and the schema has not been seen since: report it once. */
  private lossReported = false;

  constructor(private readonly options: SpiceDBHealthProberOptions) {}

  /** Probes once (ensuring the schema if leading) and starts probing; never throws. */
  async start(): Promise<void> {
    await this.probe();
    this.schedule();
  }

  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    return this.probing ?? Promise.resolve();
  }

  /** A SpiceDB call failed: probe now rather than at the next period. */
  readonly nudge = (_error?: SpiceDBError): void => {
    if (this.stopped || this.probing) return;
    clearTimeout(this.timer);
    void this.probe().then(() => this.schedule());
  };

  isAvailable(): boolean {
    return this.health === 'available';
  }

  /**
   * True once SpiceDB started without schema or was away while this process ran: the grants' statuses (their
   * ZedTokens above all) may then describe a SpiceDB that no longer exists.
   */
  wasDisrupted(): boolean {
    return this.disrupted;
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.probe().then(() => this.schedule()), this.options.periodMs);
  }

  private probe(): Promise<void> {
    this.probing ??= this.check().finally(() => (this.probing = undefined));
    return this.probing;
  }

  private async check(): Promise<void> {
    const { store, logger } = this.options;
    const before = this.health;
    try {
      const { schemaWritten } = await store.health();
      if (!schemaWritten || before !== 'available') await this.ensureSchemaIfLeading(schemaWritten);
      this.health = 'available';
      if (schemaWritten) this.lossReported = false;
      if (!schemaWritten && before !== 'unknown' && !this.lossReported) this.recovered('schema-lost');
      else if (!schemaWritten) this.disrupted = true;
      else if (before === 'unavailable') this.recovered('outage');
    } catch (err) {
      if (this.health !== 'unavailable') logger.warn({ err }, 'SpiceDB is not usable');
      this.health = err instanceof SpiceDBUnavailableError ? 'unavailable' : this.health;
    }
  }

  private async ensureSchemaIfLeading(schemaWritten: boolean): Promise<void> {
    if (!this.options.isLeader()) return;
    try {
      const { written } = await this.options.ensureSchema();
      if (written) this.options.logger.info({ schemaWasMissing: !schemaWritten }, 'wrote the SpiceDB schema');
    } catch (error) {
      if (!(error instanceof FencedOffError)) throw error; // leadership ended meanwhile: the next leader writes it
    }
  }

  private recovered(why: 'outage' | 'schema-lost'): void {
    this.disrupted = true;
    if (why === 'schema-lost') this.lossReported = true;
    this.options.logger.warn({ why }, 'SpiceDB recovered; rewriting relationships');
    this.options.onRecovered(why);
  }
}
