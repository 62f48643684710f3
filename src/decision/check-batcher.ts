import type {
  BulkCheckAnswer,
  BulkCheckItem,
  CheckPermissionInput,
  CheckPermissionResult,
  Consistency,
  SpiceDBClient,
} from '../spicedb/client.js';
import type { Context } from '@opentelemetry/api';
import { activeContextIfTracing, inContext, linkedToEach } from '../observability/tracing.js';
import { SpiceDBError } from '../spicedb/errors.js';

export interface CheckBatchSettings {
  /** Off: every check is a CheckPermission call of its own, sent at once, as many in flight as checks arrive. */
  enabled: boolean;
  /** Most checks in one CheckBulkPermissions call. */
  maxItems: number;
  /** Most SpiceDB calls in flight at once; checks that arrive while all are busy wait and go out together. */
  concurrency: number;
}

/** On: bench:check shows that it pays (docs/decision-cache.md, "Check batching on and off"). */
export const DEFAULT_CHECK_BATCH: CheckBatchSettings = { enabled: true, maxItems: 100, concurrency: 4 };

/** What the batcher needs of SpiceDB; SpiceDBClient is one. */
export type BulkPermissionChecker = Pick<SpiceDBClient, 'checkPermission' | 'checkBulkPermissions'>;

/** A check at the consistency already chosen for it. */
export type ConsistentCheck = CheckPermissionInput & { consistency: Consistency };

export interface CheckBatcherOptions {
  spicedb: BulkPermissionChecker;
  settings: Pick<CheckBatchSettings, 'maxItems' | 'concurrency'>;
  /** Called with the number of checks of every SpiceDB call it makes (1: a CheckPermission of its own). */
  sent?: (checks: number) => void;
}

interface Waiting {
  item: BulkCheckItem;
  /** The trace context the check arrived in (tracing on): its SpiceDB call is its child, or linked to it. */
  traceContext: Context | undefined;
  resolve: (result: CheckPermissionResult) => void;
  reject: (error: unknown) => void;
}

interface Batch {
  consistency: Consistency;
  checks: Waiting[];
}

/**
 * Sends checks to SpiceDB with at most `concurrency` calls in flight. The checks that arrive in one turn of the
 * event loop, or while every call is busy, wait in a queue per consistency (checks of one CheckBulkPermissions
 * share its consistency); each free call takes up to `maxItems` of the oldest queue. A check that finds a free
 * call goes out in the turn it arrived in, alone as a CheckPermission unless others arrived with it.
 * Traced, a lone check's call is a child of the check's span; a CheckBulkPermissions call starts a trace of its
 * own, linked to the span of each check it carries.
 */
export class CheckBatcher {
  /** Waiting checks by consistency, oldest queue first (a Map keeps the order its keys were added in). */
  private readonly queues = new Map<string, Batch>();
  // Counted here rather than with p-limit: a batch is formed when a call frees up, from whatever waits by then,
  // whereas p-limit queues tasks that are already fixed.
  private inFlight = 0;
  private flushScheduled = false;

  constructor(private readonly options: CheckBatcherOptions) {}

  check({ consistency, ...item }: ConsistentCheck): Promise<CheckPermissionResult> {
    return new Promise((resolve, reject) => {
      const key = consistencyKey(consistency);
      let queue = this.queues.get(key);
      if (!queue) this.queues.set(key, (queue = { consistency, checks: [] }));
      queue.checks.push({ item, traceContext: activeContextIfTracing(), resolve, reject });
      this.scheduleFlush();
    });
  }

  /** Checks waiting for a free call. */
  get waiting(): number {
    let count = 0;
    for (const queue of this.queues.values()) count += queue.checks.length;
    return count;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.inFlight >= this.options.settings.concurrency) return;
    this.flushScheduled = true;
    // After the turn's other arrivals (one poll of the event loop), not after a timer: no wait when idle.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.options.settings.concurrency) {
      const batch = this.nextBatch();
      if (!batch) return;
      this.inFlight += 1;
      void this.send(batch).finally(() => {
        this.inFlight -= 1;
        this.flush();
      });
    }
  }

  private nextBatch(): Batch | undefined {
    const next = this.queues.entries().next();
    if (next.done) return undefined;
    const [key, queue] = next.value;
    const checks = queue.checks.splice(0, this.options.settings.maxItems);
    if (queue.checks.length === 0) this.queues.delete(key);
    return { consistency: queue.consistency, checks };
  }

  private async send({ consistency, checks }: Batch): Promise<void> {
    this.options.sent?.(checks.length);
    const [lone] = checks;
    if (checks.length === 1 && lone) {
      await inContext(lone.traceContext, () =>
        this.options.spicedb.checkPermission({ ...lone.item, consistency }),
      ).then(lone.resolve, lone.reject);
      return;
    }
    try {
      const answers = await linkedToEach(
        checks.map((check) => check.traceContext),
        () =>
          this.options.spicedb.checkBulkPermissions(
            checks.map((check) => check.item),
            consistency,
          ),
      );
      checks.forEach((check, index) => settle(check, answers[index]));
    } catch (error) {
      for (const check of checks) check.reject(error);
    }
  }
}

function settle(check: Waiting, answer: BulkCheckAnswer | undefined): void {
  if (answer === undefined) {
    check.reject(new SpiceDBError('CheckBulkPermissions', undefined, 'no answer for this check'));
  } else if (answer instanceof SpiceDBError) {
    check.reject(answer);
  } else {
    check.resolve(answer);
  }
}

/** Equal for consistencies SpiceDB evaluates alike: one CheckBulkPermissions carries one of them. */
function consistencyKey(consistency: Consistency): string {
  if ('atLeastAsFresh' in consistency) return `at_least_as_fresh ${consistency.atLeastAsFresh}`;
  if ('atExactSnapshot' in consistency) return `at_exact_snapshot ${consistency.atExactSnapshot}`;
  if ('fullyConsistent' in consistency) return 'fully_consistent';
  return 'minimize_latency';
}
