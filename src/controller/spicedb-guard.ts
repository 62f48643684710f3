import type { Logger } from '../observability/logger.js';
import { SpiceDBUnavailableError, type SpiceDBError } from '../spicedb/errors.js';
import type { SchemaStore } from './relationship-store.js';

export interface SpiceDBGuardOptions {
  store: SchemaStore;
  schema: string;
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
 * Keeps SpiceDB usable for the controller: writes the schema at start-up when SpiceDB's differs, probes
 * SpiceDB periodically (and at once when a call failed), writes the schema again when it is gone, and
 * reports recoveries so that the controller can rewrite what SpiceDB may have lost.
 */
export class SpiceDBGuard {
  private health: Health = 'unknown';
  private timer?: NodeJS.Timeout;
  private probing?: Promise<void>;
  private stopped = false;
  /** Whether this process ever found SpiceDB without its schema, or saw it come back from an outage. */
  private disrupted = false;

  constructor(private readonly options: SpiceDBGuardOptions) {}

  /** Ensures the schema and starts probing; never throws (an unreachable SpiceDB is probed again). */
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
    const { store, schema, logger } = this.options;
    const before = this.health;
    try {
      const { schemaWritten } = await store.health();
      if (!schemaWritten || before !== 'available') {
        const { written } = await store.ensureSchema(schema);
        if (written) logger.info({ schemaWasMissing: !schemaWritten }, 'wrote the SpiceDB schema');
      }
      this.health = 'available';
      if (!schemaWritten && before !== 'unknown') this.recovered('schema-lost');
      else if (!schemaWritten) this.disrupted = true;
      else if (before === 'unavailable') this.recovered('outage');
    } catch (err) {
      if (this.health !== 'unavailable') logger.warn({ err }, 'SpiceDB is not usable');
      this.health = err instanceof SpiceDBUnavailableError ? 'unavailable' : this.health;
    }
  }

  private recovered(why: 'outage' | 'schema-lost'): void {
    this.disrupted = true;
    this.options.logger.warn({ why }, 'SpiceDB recovered; rewriting relationships');
    this.options.onRecovered(why);
  }
}
