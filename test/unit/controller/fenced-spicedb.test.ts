import { describe, expect, it } from 'vitest';
import {
  FENCE_OBJECT_TYPE,
  FencedOffError,
  FencedSpiceDB,
  TERM_OBJECT_TYPE,
} from '../../../src/controller/fenced-spicedb.js';
import { tupleKey } from '../../../src/verdict/tuple-key.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import { SpiceDBError } from '../../../src/spicedb/errors.js';
import type { RelationshipUpdate } from '../../../src/spicedb/client.js';
import { consumerTuple, FakeSpiceDB, OTHER_USER } from './support/fakes.js';

const touch = (relationship = consumerTuple()): RelationshipUpdate[] => [
  { operation: 'touch', relationship },
];

/** One replica's writer: `leadership.term` is what its election says now. */
function replica(spicedb: FakeSpiceDB, term: string | undefined) {
  const leadership = { term, fenceLost: 0 };
  const store = new FencedSpiceDB({
    client: spicedb,
    leaseName: 'policy-grant-controller',
    term: () => leadership.term,
    schema: 'definition user {}',
    onFenceLost: () => (leadership.fenceLost += 1),
    logger: silentLogger,
  });
  return { store, leadership };
}

const fenceHolders = (spicedb: FakeSpiceDB): string[] =>
  [...spicedb.tuples.values()]
    .filter((relationship) => relationship.resource.type === FENCE_OBJECT_TYPE)
    .map((relationship) => relationship.subject.id);

describe('FencedSpiceDB', () => {
  it('refuses a write once leadership is lost, without calling SpiceDB, and not as a SpiceDB failure', async () => {
    const spicedb = new FakeSpiceDB();
    const { store, leadership } = replica(spicedb, 'term-a');
    await store.writeRelationshipsInBatches(touch());
    const calls = spicedb.writeCalls.length;
    leadership.term = undefined;
    const refused = store.writeRelationshipsInBatches(touch(consumerTuple(OTHER_USER)));
    await expect(refused).rejects.toBeInstanceOf(FencedOffError);
    await expect(refused).rejects.not.toBeInstanceOf(SpiceDBError);
    expect(spicedb.writeCalls).toHaveLength(calls);
    expect(spicedb.keys()).not.toContain(tupleKey(consumerTuple(OTHER_USER)));
  });

  it("refuses a write once the reconcile's signal has aborted", async () => {
    const spicedb = new FakeSpiceDB();
    const { store } = replica(spicedb, 'term-a');
    const abort = new AbortController();
    abort.abort();
    await expect(store.writeRelationshipsInBatches(touch(), abort.signal)).rejects.toBeInstanceOf(
      FencedOffError,
    );
    expect(spicedb.keys()).toEqual([]);
  });

  it("sets the schema and the fence at a term's first write, and makes every write depend on the fence", async () => {
    const spicedb = new FakeSpiceDB();
    const { store } = replica(spicedb, 'term-a');
    await store.writeRelationshipsInBatches(touch());
    await store.writeRelationshipsInBatches(touch(consumerTuple(OTHER_USER)));
    expect(spicedb.schemaWrites).toBe(1);
    expect(fenceHolders(spicedb)).toEqual(['term-a']);
    const [, ...writes] = spicedb.preconditions; // the first one set the fence
    expect(writes).toHaveLength(2);
    for (const preconditions of writes) {
      expect(preconditions).toEqual([
        {
          operation: 'mustMatch',
          filter: {
            resourceType: FENCE_OBJECT_TYPE,
            resourceId: 'policy-grant-controller',
            relation: 'holder',
            subject: { type: TERM_OBJECT_TYPE, id: 'term-a', relation: '' },
          },
        },
      ]);
    }
  });

  it("fails a deposed leader's late write in SpiceDB once a successor set the fence, and tells it", async () => {
    const spicedb = new FakeSpiceDB();
    const deposed = replica(spicedb, 'term-a');
    await deposed.store.writeRelationshipsInBatches(touch());
    const successor = replica(spicedb, 'term-b');
    await successor.store.writeRelationshipsInBatches([
      { operation: 'delete', relationship: consumerTuple() },
    ]);
    expect(fenceHolders(spicedb)).toEqual(['term-b']);

    // The deposed leader has not noticed yet (its term is still current to it): SpiceDB refuses the write.
    await expect(deposed.store.writeRelationshipsInBatches(touch())).rejects.toBeInstanceOf(FencedOffError);
    expect(deposed.leadership.fenceLost).toBe(1);
    expect(spicedb.keys()).not.toContain(tupleKey(consumerTuple()));
  });

  it('moves the fence only from what it read: a replica that set it in between wins', async () => {
    const spicedb = new FakeSpiceDB();
    const first = replica(spicedb, 'term-a');
    const second = replica(spicedb, 'term-b');
    spicedb.betweenPages = async () => {
      spicedb.betweenPages = undefined;
      await second.store.writeRelationshipsInBatches(touch(consumerTuple(OTHER_USER)));
    };
    spicedb.seed({
      resource: { type: FENCE_OBJECT_TYPE, id: 'policy-grant-controller' },
      relation: 'holder',
      subject: { type: TERM_OBJECT_TYPE, id: 'term-old' },
    });
    await expect(first.store.writeRelationshipsInBatches(touch())).rejects.toBeInstanceOf(FencedOffError);
    expect(first.leadership.fenceLost).toBe(1);
    expect(fenceHolders(spicedb)).toEqual(['term-b']);
  });

  it('sets the fence again when SpiceDB lost it (restarted empty)', async () => {
    const spicedb = new FakeSpiceDB();
    const { store, leadership } = replica(spicedb, 'term-a');
    await store.writeRelationshipsInBatches(touch());
    spicedb.tuples.clear();
    await expect(store.writeRelationshipsInBatches(touch())).rejects.toBeInstanceOf(SpiceDBError);
    await store.writeRelationshipsInBatches(touch());
    expect(fenceHolders(spicedb)).toEqual(['term-a']);
    expect(spicedb.keys()).toContain(tupleKey(consumerTuple()));
    expect(leadership.fenceLost).toBe(0);
  });

  it('writes the schema only while leading', async () => {
    const spicedb = new FakeSpiceDB();
    const { store, leadership } = replica(spicedb, undefined);
    await expect(store.ensureSchema()).rejects.toBeInstanceOf(FencedOffError);
    expect(spicedb.schemaWrites).toBe(0);
    leadership.term = 'term-a';
    await store.ensureSchema();
    expect(spicedb.schemaWrites).toBeGreaterThan(0);
  });
});
