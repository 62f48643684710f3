import type { ReadRelationshipsOptions, RelationshipFilter, RelationshipUpdate } from '../spicedb/client.js';
import { DEFAULT_MAX_UPDATES_PER_WRITE } from '../spicedb/client.js';
import { tupleKey } from '../verdict/tuple-key.js';
import { FencedOffError } from './fenced-spicedb.js';
import type { RelationshipStore } from './relationship-store.js';
import type { Context } from '@opentelemetry/api';
import { activeContextIfTracing, onBehalfOf } from '../observability/tracing.js';

export interface WriteBatcherOptions {
  /** Where the batches go: the fenced store, which checks leadership and adds the fence to every call. */
  store: RelationshipStore;
  maxUpdatesPerWrite?: number;
  /** How long a write waits for others to join it when none is in flight. */
  windowMs?: number;
  /** Told how many callers' writes each call carried. */
  onBatch?: (writes: number) => void;
}

const DEFAULT_BATCH_WINDOW_MS = 2;

interface QueuedWrite {
  updates: readonly RelationshipUpdate[];
  /** The writer's trace context (tracing on): the call is its child, or linked to it when shared. */
  traceContext: Context | undefined;
  signal: AbortSignal | undefined;
  resolve(zedToken: string | undefined): void;
  reject(error: unknown): void;
}

const ignore = (): void => undefined;

/**
 * The controller's SpiceDB writes, queued and sent in batches: writes that arrive within a short window, or
 * while a call is in flight, share one WriteRelationships (one atomic call under the store's fence; each
 * caller gets its ZedToken; a failed call fails every write it carried). One call at a time, in the order the
 * writes were queued, and a call never carries two updates of one relationship (a write that would is sent
 * with the next call), so writes land in the order they were queued: a writer may let go of its objects'
 * lock once its write is queued. Reads start once every write queued before them has been answered.
 */
export class WriteBatcher implements RelationshipStore {
  private readonly maxUpdatesPerWrite: number;
  private readonly windowMs: number;
  private readonly queue: QueuedWrite[] = [];
  /** Settles once the last write queued so far has been answered (writes are answered in order). */
  private lastAnswered: Promise<void> = Promise.resolve();
  private draining = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: WriteBatcherOptions) {
    this.maxUpdatesPerWrite = options.maxUpdatesPerWrite ?? DEFAULT_MAX_UPDATES_PER_WRITE;
    this.windowMs = options.windowMs ?? DEFAULT_BATCH_WINDOW_MS;
  }

  /** Queues the write at once (its place in the order is taken when this is called). */
  writeRelationshipsInBatches(
    updates: readonly RelationshipUpdate[],
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    if (updates.length === 0) return Promise.resolve(undefined);
    const answered = new Promise<string | undefined>((resolve, reject) => {
      this.queue.push({ updates, traceContext: activeContextIfTracing(), signal, resolve, reject });
    });
    this.lastAnswered = answered.then(ignore, ignore);
    this.schedule();
    return answered;
  }

  readonly readRelationships: RelationshipStore['readRelationships'] = (filter, options) =>
    this.readAfterQueuedWrites(filter, options);

  ensureSchema(): Promise<{ written: boolean }> {
    return this.options.store.ensureSchema();
  }

  private async *readAfterQueuedWrites(filter: RelationshipFilter, options?: ReadRelationshipsOptions) {
    await this.lastAnswered;
    yield* this.options.store.readRelationships(filter, options);
  }

  private schedule(): void {
    if (this.draining || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, this.windowMs);
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) await this.send(this.nextBatch());
    } finally {
      this.draining = false;
    }
  }

  /** From the head of the queue: as many writes as fit in one call without repeating a relationship. */
  private nextBatch(): QueuedWrite[] {
    const batch: QueuedWrite[] = [];
    const keys = new Set<string>();
    let size = 0;
    for (const write of this.queue) {
      const writeKeys = write.updates.map((update) => tupleKey(update.relationship));
      const fits = size + write.updates.length <= this.maxUpdatesPerWrite;
      if (batch.length > 0 && (!fits || writeKeys.some((key) => keys.has(key)))) break;
      batch.push(write);
      writeKeys.forEach((key) => keys.add(key));
      size += write.updates.length;
    }
    this.queue.splice(0, batch.length);
    return batch;
  }

  private async send(batch: QueuedWrite[]): Promise<void> {
    const live = batch.filter((write) => !write.signal?.aborted);
    batch
      .filter((write) => write.signal?.aborted)
      .forEach((write) => write.reject(new FencedOffError('the reconcile was aborted')));
    if (live.length === 0) return;
    this.options.onBatch?.(live.length);
    try {
      const zedToken = await onBehalfOf(
        live.map((write) => write.traceContext),
        () =>
          this.options.store.writeRelationshipsInBatches(
            live.flatMap((write) => write.updates),
            sharedSignal(live),
          ),
      );
      live.forEach((write) => write.resolve(zedToken));
    } catch (error) {
      live.forEach((write) => write.reject(error));
    }
  }
}

/**
 * The signal the store checks again right before its call: the writers' own when they share one (the
 * reconciles of one controller do); otherwise none, each having been checked just before.
 */
function sharedSignal(writes: readonly QueuedWrite[]): AbortSignal | undefined {
  const [first] = writes;
  return writes.every((write) => write.signal === first?.signal) ? first?.signal : undefined;
}
