import type { Logger } from '../observability/logger.js';
import type {
  Precondition,
  Relationship,
  RelationshipFilter,
  RelationshipUpdate,
  SpiceDBClient,
} from '../spicedb/client.js';
import { chunk, DEFAULT_MAX_UPDATES_PER_WRITE } from '../spicedb/client.js';
import { GrpcCode, SpiceDBError } from '../spicedb/errors.js';
import { encodeObjectId } from '../spicedb/object-id.js';
import { Backoff } from '../runtime/backoff.js';
import { sleep } from '../runtime/timing.js';
import type { RelationshipStore } from './relationship-store.js';

/**
 * A write refused because this replica does not lead (any more), its reconcile was aborted, or another term
 * holds the fence in SpiceDB. Not a SpiceDB failure: nothing to retry here, the leader does the work.
 */
export class FencedOffError extends Error {
  override readonly name = 'FencedOffError';
}

export const FENCE_OBJECT_TYPE = 'controller_lease';
export const FENCE_RELATION = 'holder';
export const TERM_OBJECT_TYPE = 'controller_term';

export type FenceClient = Pick<SpiceDBClient, 'writeRelationships' | 'readRelationships' | 'ensureSchema'>;

export interface FencedSpiceDBOptions {
  client: FenceClient;
  /** The Lease's name: the fence's object id (encoded). */
  leaseName: string;
  /** The current term of leadership; undefined when this replica does not lead. Asked before every write. */
  term(): string | undefined;
  /** The schema to ensure when a term begins (the fence's definitions are part of it). */
  schema: string;
  /** SpiceDB shows another term in the fence: someone else acts as leader. */
  onFenceLost(): void;
  logger: Logger;
  maxUpdatesPerWrite?: number;
}

const isFailedPrecondition = (error: unknown): boolean =>
  error instanceof SpiceDBError && error.code === GrpcCode.FAILED_PRECONDITION;

/**
 * The controller's only way to write SpiceDB. Right before every call it checks that this replica leads and
 * that the caller's signal has not aborted; and every WriteRelationships carries a precondition that the fence
 * relationship names this replica's term, so a write still in flight (or delayed in the network) when a
 * successor took over fails in SpiceDB instead of landing after the successor's writes. A term's first write
 * ensures the schema and then moves the fence to the term (compare-and-swap on what it read).
 */
export class FencedSpiceDB implements RelationshipStore {
  private readonly fenceId: string;
  private readonly maxUpdatesPerWrite: number;
  private fenced?: { term: string; ready: Promise<void> };

  constructor(private readonly options: FencedSpiceDBOptions) {
    this.fenceId = encodeObjectId(options.leaseName);
    this.maxUpdatesPerWrite = options.maxUpdatesPerWrite ?? DEFAULT_MAX_UPDATES_PER_WRITE;
  }

  readonly readRelationships: RelationshipStore['readRelationships'] = (filter, options) =>
    this.options.client.readRelationships(filter, options);

  async writeRelationshipsInBatches(
    updates: readonly RelationshipUpdate[],
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    let zedToken: string | undefined;
    for (const batch of chunk(updates, this.maxUpdatesPerWrite)) zedToken = await this.write(batch, signal);
    return zedToken;
  }

  /** Writes the schema when SpiceDB's differs; only the leader may. */
  async ensureSchema(): Promise<{ written: boolean }> {
    await this.enter();
    return this.options.client.ensureSchema(this.options.schema);
  }

  /**
   * Moves the fence to this replica's term before the term decides anything: from then on no write of an
   * earlier leader lands. Retries while SpiceDB cannot be reached (1 s doubling to 10 s); fails with
   * FencedOffError when this replica stops leading, `signal` aborts or another term took the fence.
   */
  async beginTerm(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ initialMs: 1_000, maxMs: 10_000, jitter: 0.2 });
    for (;;) {
      try {
        await this.enter(signal);
        return;
      } catch (error) {
        if (error instanceof FencedOffError) throw error;
        const retryInMs = Math.round(backoff.next());
        this.options.logger.warn(
          { err: error, retryInMs },
          'could not set the fence for a new term; retrying',
        );
        await sleep(retryInMs, signal);
      }
    }
  }

  /** SpiceDB lost its data (restarted empty): the next write sets the fence again. */
  forgetFence(): void {
    this.fenced = undefined;
  }

  private async write(batch: RelationshipUpdate[], signal: AbortSignal | undefined): Promise<string> {
    const term = await this.enter(signal);
    try {
      return await this.options.client.writeRelationships(batch, { preconditions: [this.heldBy(term)] });
    } catch (error) {
      if (isFailedPrecondition(error)) await this.diagnoseFailedPrecondition(term);
      throw error;
    }
  }

  /** Throws FencedOffError unless this replica leads and `signal` is live; sets the term's fence first. */
  private async enter(signal?: AbortSignal): Promise<string> {
    const term = this.admit(signal);
    if (this.fenced?.term !== term) {
      const fenced = { term, ready: this.establish(term) };
      this.fenced = fenced;
      fenced.ready.catch(() => {
        if (this.fenced === fenced) this.fenced = undefined;
      });
    }
    await this.fenced.ready;
    // Setting the fence took time: leadership is checked again right before the caller's call.
    if (this.admit(signal) !== term) throw new FencedOffError('a new term began while the fence was set');
    return term;
  }

  private admit(signal?: AbortSignal): string {
    if (signal?.aborted) throw new FencedOffError('the reconcile was aborted');
    const term = this.options.term();
    if (term === undefined) throw new FencedOffError('this replica does not lead');
    return term;
  }

  /** Moves the fence to `term`: deletes what it read and writes the term, only if nothing changed meanwhile. */
  private async establish(term: string): Promise<void> {
    const { client, logger } = this.options;
    await client.ensureSchema(this.options.schema);
    const previous = await this.readFence();
    if (previous.length === 1 && previous[0]?.subject.id === term) return;
    const preconditions: Precondition[] =
      previous.length > 0
        ? previous.map((relationship) => ({ operation: 'mustMatch', filter: exactly(relationship) }))
        : [{ operation: 'mustNotMatch', filter: this.fenceFilter() }];
    try {
      await client.writeRelationships(
        [
          ...previous.map((relationship): RelationshipUpdate => ({ operation: 'delete', relationship })),
          { operation: 'touch', relationship: this.fenceOf(term) },
        ],
        { preconditions },
      );
    } catch (error) {
      if (!isFailedPrecondition(error)) throw error;
      this.fenceLost('another replica moved the fence while this one set it');
    }
    logger.info({ term, previous: previous.map((relationship) => relationship.subject.id) }, 'fence set');
  }

  /**
   * A write failed its precondition: either the fence names another term (someone else leads: stop), or it
   * is gone (SpiceDB lost its data: set it again on the next write), or the failure was about something else
   * (a schema SpiceDB lacks), which the caller's error already says.
   */
  private async diagnoseFailedPrecondition(term: string): Promise<void> {
    const holders = await this.readFence().catch(() => undefined);
    if (holders === undefined || holders.some((relationship) => relationship.subject.id === term)) return;
    if (holders.length === 0) {
      this.forgetFence();
      return;
    }
    this.fenceLost(`the fence names term ${holders[0]?.subject.id ?? '?'}`);
  }

  private fenceLost(why: string): never {
    this.options.logger.error({ why }, 'fenced off in SpiceDB: another replica acts as leader');
    this.options.onFenceLost();
    throw new FencedOffError(`fenced off: ${why}`);
  }

  private async readFence(): Promise<Relationship[]> {
    const holders: Relationship[] = [];
    const pages = this.options.client.readRelationships(this.fenceFilter(), {
      consistency: { fullyConsistent: true },
    });
    for await (const page of pages) holders.push(...page.relationships);
    return holders;
  }

  private fenceFilter(): RelationshipFilter {
    return { resourceType: FENCE_OBJECT_TYPE, resourceId: this.fenceId, relation: FENCE_RELATION };
  }

  private heldBy(term: string): Precondition {
    return { operation: 'mustMatch', filter: exactly(this.fenceOf(term)) };
  }

  private fenceOf(term: string): Relationship {
    return {
      resource: { type: FENCE_OBJECT_TYPE, id: this.fenceId },
      relation: FENCE_RELATION,
      subject: { type: TERM_OBJECT_TYPE, id: term },
    };
  }
}

function exactly({ resource, relation, subject }: Relationship): RelationshipFilter {
  return {
    resourceType: resource.type,
    resourceId: resource.id,
    relation,
    subject: { type: subject.type, id: subject.id, relation: subject.relation ?? '' },
  };
}
