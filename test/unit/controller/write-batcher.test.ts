import { describe, expect, it } from 'vitest';
import { FENCE_OBJECT_TYPE, FencedOffError, FencedSpiceDB } from '../../../src/controller/fenced-spicedb.js';
import { WriteBatcher } from '../../../src/controller/write-batcher.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import type { Relationship, RelationshipUpdate } from '../../../src/spicedb/client.js';
import { GrpcCode, SpiceDBError } from '../../../src/spicedb/errors.js';
import { tupleKey } from '../../../src/verdict/tuple-key.js';
import { consumerTuple, FakeRelationshipStore, FakeSpiceDB } from './support/fakes.js';
import { until } from '../../../dev/wait/until.js';

const user = (index: number) => `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`;
const touch = (relationship: Relationship): RelationshipUpdate[] => [{ operation: 'touch', relationship }];
const remove = (relationship: Relationship): RelationshipUpdate[] => [{ operation: 'delete', relationship }];
const touches = (from: number, count: number) =>
  Array.from(
    { length: count },
    (_, index) => touch(consumerTuple(user(from + index)))[0] as RelationshipUpdate,
  );

/** A store whose calls wait until the test lets them go: to queue writes while one is in flight. */
class GatedStore extends FakeRelationshipStore {
  private gates: (() => void)[] = [];
  readonly started: number[] = [];

  override async writeRelationshipsInBatches(updates: readonly RelationshipUpdate[]) {
    this.started.push(updates.length);
    await new Promise<void>((resolve) => this.gates.push(resolve));
    return super.writeRelationshipsInBatches(updates);
  }

  async release(): Promise<void> {
    await until(() => this.gates.length > 0, 'a write at the gate', undefined, 1);
    this.gates.shift()?.();
  }
}

function batcher(store: ConstructorParameters<typeof WriteBatcher>[0]['store'], maxUpdatesPerWrite?: number) {
  const batches: number[] = [];
  const writer = new WriteBatcher({
    store,
    windowMs: 1,
    onBatch: (writes) => batches.push(writes),
    ...(maxUpdatesPerWrite === undefined ? {} : { maxUpdatesPerWrite }),
  });
  return { writer, batches };
}

describe('WriteBatcher', () => {
  it('sends writes queued together in one call, and gives each its ZedToken', async () => {
    const store = new FakeRelationshipStore();
    const { writer, batches } = batcher(store);
    const tokens = await Promise.all(
      [0, 1, 2].map((index) => writer.writeRelationshipsInBatches(touch(consumerTuple(user(index))))),
    );
    expect(store.writeCalls).toHaveLength(1);
    expect(store.writeCalls[0]).toHaveLength(3);
    expect(batches).toEqual([3]);
    expect(new Set(tokens)).toEqual(new Set(['token-1']));
  });

  it('sends the writes queued while a call is in flight together in the next call', async () => {
    const store = new GatedStore();
    const { writer, batches } = batcher(store);
    const first = writer.writeRelationshipsInBatches(touches(0, 1));
    await until(() => store.started.length === 1);
    const later = [1, 2, 3, 4].map((index) => writer.writeRelationshipsInBatches(touches(index, 1)));
    await store.release();
    await first;
    await store.release();
    await Promise.all(later);
    expect(store.started).toEqual([1, 4]);
    expect(batches).toEqual([1, 4]);
  });

  it('keeps a call within the per-call limit, and sends a larger write alone', async () => {
    const store = new FakeRelationshipStore(4);
    const { writer, batches } = batcher(store, 4);
    await Promise.all(
      [3, 1, 2, 2, 6, 1].map((count, index) =>
        writer.writeRelationshipsInBatches(touches(index * 10, count)),
      ),
    );
    expect(batches).toEqual([2, 2, 1, 1]);
    // The write of 6 alone, in the store's calls of at most 4.
    expect(store.writeCalls.map((call) => call.length)).toEqual([4, 4, 4, 2, 1]);
    expect(store.keys()).toHaveLength(15);
  });

  it('lands writes in the order they were queued, a repeated relationship in a later call', async () => {
    const store = new FakeRelationshipStore();
    const { writer } = batcher(store);
    const tuple = consumerTuple(user(1));
    await Promise.all([
      writer.writeRelationshipsInBatches(touch(tuple)),
      writer.writeRelationshipsInBatches(touches(2, 1)),
      writer.writeRelationshipsInBatches(remove(tuple)),
      writer.writeRelationshipsInBatches(touches(3, 1)),
      writer.writeRelationshipsInBatches(touch(tuple)),
    ]);
    expect(store.writeCalls.map((call) => call.length)).toEqual([2, 2, 1]);
    expect(store.keys()).toContain(tupleKey(tuple));
  });

  it('fails every write a failed call carried, and sends the next ones in a call of their own', async () => {
    const store = new GatedStore();
    const { writer } = batcher(store);
    const inFlight = writer.writeRelationshipsInBatches(touches(0, 1));
    await until(() => store.started.length === 1);
    const failing = [1, 2, 3].map((index) => writer.writeRelationshipsInBatches(touches(index, 1)));
    await store.release();
    await inFlight;
    const refusal = new SpiceDBError('WriteRelationships', GrpcCode.UNAVAILABLE, 'unavailable');
    store.failNextWrite = refusal;
    const retried = writer.writeRelationshipsInBatches(touches(1, 1));
    await store.release();
    for (const write of failing) await expect(write).rejects.toBe(refusal);
    await store.release();
    await retried;
    expect(store.started).toEqual([1, 3, 1]);
    expect(store.keys()).toEqual([0, 1].map((index) => tupleKey(consumerTuple(user(index)))).sort());
  });

  it('refuses the writes of aborted reconciles without sending them, and sends the others', async () => {
    const store = new FakeRelationshipStore();
    const { writer } = batcher(store);
    const aborted = new AbortController();
    const refused = writer.writeRelationshipsInBatches(touches(0, 1), aborted.signal);
    const written = writer.writeRelationshipsInBatches(touches(1, 1), new AbortController().signal);
    aborted.abort();
    await expect(refused).rejects.toBeInstanceOf(FencedOffError);
    await written;
    expect(store.keys()).toEqual([tupleKey(consumerTuple(user(1)))]);
  });

  it('reads once the writes queued before the read have been answered', async () => {
    const store = new GatedStore();
    const { writer } = batcher(store);
    void writer.writeRelationshipsInBatches(touches(0, 1));
    const read = (async () => {
      const keys: string[] = [];
      for await (const page of writer.readRelationships({ resourceType: 'resource' })) {
        keys.push(...page.relationships.map(tupleKey));
      }
      return keys;
    })();
    await store.release();
    expect(await read).toEqual([tupleKey(consumerTuple(user(0)))]);
  });

  it("keeps the fence on a batch: a deposed leader's batched writes all fail and write nothing", async () => {
    const spicedb = new FakeSpiceDB();
    const fenced = (term: string) =>
      new FencedSpiceDB({
        client: spicedb,
        leaseName: 'policy-grant-controller',
        term: () => term,
        schema: 'definition user {}',
        onFenceLost: () => undefined,
        logger: silentLogger,
      });
    const deposed = batcher(fenced('term-a'));
    await deposed.writer.writeRelationshipsInBatches(touches(0, 1));
    await batcher(fenced('term-b')).writer.writeRelationshipsInBatches(touches(1, 1));

    const writes = [2, 3, 4].map((index) => deposed.writer.writeRelationshipsInBatches(touches(index, 1)));
    for (const write of writes) await expect(write).rejects.toBeInstanceOf(FencedOffError);
    expect(deposed.batches).toEqual([1, 3]);
    expect(spicedb.preconditions.at(-1)).toEqual([
      expect.objectContaining({
        operation: 'mustMatch',
        filter: expect.objectContaining({
          resourceType: FENCE_OBJECT_TYPE,
          subject: expect.objectContaining({ id: 'term-a' }),
        }),
      }),
    ]);
    const users = [...spicedb.tuples.values()]
      .filter((relationship) => relationship.resource.type === 'resource')
      .map((relationship) => relationship.subject.id);
    expect(users.sort()).toEqual([user(0), user(1)]);
  });
});
