import { randomUUID } from 'node:crypto';
import type { MembershipKey } from '../../../src/api/v1alpha1/index.js';
import { sleep } from '../../../dev/wait/sleep.js';
import type { MembershipChange, MembershipWriter } from './membership-writer.js';

export interface MembershipStreamOptions {
  /** Changes in all: additions, and removals of members added earlier. */
  changes: number;
  /** Every how many changes one is a removal. */
  removeEvery: number;
  organisations: number;
  groupsPerOrganisation: number;
  /** Writers at once. */
  concurrency: number;
  /** The stream is spread evenly over this long. */
  durationMs: number;
}

/**
 * A bounded stream of membership changes: organisation and group members added, some of them removed again
 * later, paced evenly and written by `write` with a few writers at once. A removal waits for its addition.
 */
export class MembershipStream {
  readonly counts = { added: 0, removed: 0 };
  private readonly plan: MembershipChange['kind'][];
  private readonly added = new Map<number, { key: MembershipKey; written: Promise<void> }>();
  private readonly organisations: string[];
  private next = 0;

  constructor(
    private readonly write: MembershipWriter,
    private readonly options: MembershipStreamOptions,
  ) {
    this.organisations = Array.from({ length: options.organisations }, () => randomUUID());
    this.plan = Array.from({ length: options.changes }, (_, index) =>
      index % options.removeEvery === options.removeEvery - 1 ? 'removed' : 'added',
    );
  }

  async run(): Promise<void> {
    const started = Date.now();
    const interval = this.options.durationMs / this.options.changes;
    await Promise.all(
      Array.from({ length: this.options.concurrency }, async () => {
        for (let index = this.next++; index < this.plan.length; index = this.next++) {
          await sleep(Math.max(0, started + index * interval - Date.now()));
          await this.apply(index);
        }
      }),
    );
  }

  private async apply(index: number): Promise<void> {
    if (this.plan[index] === 'added') {
      const key = this.newKey(index);
      const written = this.write({ kind: 'added', key, at: new Date() });
      this.added.set(index, { key, written });
      await written;
      this.counts.added += 1;
      return;
    }
    // The oldest addition not removed yet: removals follow additions in the plan.
    const [oldest] = [...this.added.entries()].sort(([a], [b]) => a - b);
    if (!oldest) return;
    const [addedAt, { key, written }] = oldest;
    this.added.delete(addedAt);
    await written;
    await this.write({ kind: 'removed', key, at: new Date() });
    this.counts.removed += 1;
  }

  /** Every third member is a group member; users are never reused, so each key is new. */
  private newKey(index: number): MembershipKey {
    const organisationId = this.organisations[index % this.organisations.length] as string;
    const userId = randomUUID();
    if (index % 3 !== 0) return { organisationId, userId };
    return { organisationId, groupId: `group-${index % this.options.groupsPerOrganisation}`, userId };
  }
}
