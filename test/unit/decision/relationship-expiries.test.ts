import { describe, expect, it } from 'vitest';
import { RelationshipExpiries } from '../../../src/decision/relationship-expiries.js';
import { CHECKED_RESOURCE } from '../../../src/decision/revision-keys.js';
import type { Relationship, RelationshipPage, RelationshipUpdate } from '../../../src/spicedb/client.js';
import { parseSchemaShape, readSchemaText } from '../../../src/spicedb/schema.js';
import { until } from '../../../dev/wait/until.js';
import { capturedLogger } from '../http/support/serve.js';

const NOW = 1_000_000;

function grant(item: string, user: string, expiresInMs?: number): Relationship {
  return {
    resource: { type: 'resource', id: item },
    relation: 'api_consumer',
    subject: { type: 'user', id: user },
    ...(expiresInMs === undefined ? {} : { expiresAt: new Date(NOW + expiresInMs) }),
  };
}

const touch = (relationship: Relationship): RelationshipUpdate => ({ operation: 'touch', relationship });
const remove = (relationship: Relationship): RelationshipUpdate => ({ operation: 'delete', relationship });

/** A SpiceDB whose snapshot reads the test releases (or fails), recording the revisions asked for. */
function snapshots() {
  const reads: string[] = [];
  const releases: Array<{ resolve: (pages: Relationship[][]) => void; reject: (error: Error) => void }> = [];
  async function* read(revision: string): AsyncIterable<RelationshipPage> {
    reads.push(revision);
    const pages = await new Promise<Relationship[][]>((resolve, reject) =>
      releases.push({ resolve, reject }),
    );
    for (const relationships of pages) yield { relationships, cursor: undefined };
  }
  return {
    reads,
    read,
    release: (...pages: Relationship[][]) => releases.shift()?.resolve(pages),
    fail: () => releases.shift()?.reject(new Error('spicedb unavailable')),
    get waiting() {
      return releases.length;
    },
  };
}

function expiries(spicedb = snapshots(), rereadFloor?: number) {
  const clock = { now: NOW };
  const index = new RelationshipExpiries({
    read: spicedb.read,
    graceMs: 7_000,
    logger: capturedLogger().logger,
    retry: { initialMs: 1, maxMs: 1 },
    now: () => clock.now,
    ...(rereadFloor === undefined ? {} : { rereadFloor }),
  });
  return { index, clock, spicedb };
}

describe('RelationshipExpiries', () => {
  it('knows nothing until a snapshot after the Watch’s start is read', async () => {
    const { index, spicedb } = expiries();
    expect(index.untilEarliestExpiry('resource', 'r')).toBeUndefined();
    index.reloadFrom('head-1');
    await until(() => spicedb.waiting === 1, 'the snapshot read');
    expect(spicedb.reads).toEqual(['head-1']);
    expect(index.known).toBe(false);
    spicedb.release(
      [grant('r', 'a', 3_000), grant('r', 'b', 5_000)],
      [grant('s', 'c', 9_000), grant('s', 'd')],
    );
    await until(() => index.known, 'the snapshot');
    expect(index.untilEarliestExpiry('resource', 'r')).toBe(3_000);
    expect(index.untilEarliestExpiry('resource', 's')).toBe(9_000);
    expect(index.untilEarliestExpiry('resource', 'never-granted')).toBe(Infinity);
    expect(index.size).toBe(3); // relationships that never expire add nothing
  });

  it('adds the Watch’s updates, during the read too, and keeps an expiry until it is past (on the safe side)', async () => {
    const { index, spicedb } = expiries();
    index.reloadFrom('head-1');
    await until(() => spicedb.waiting === 1, 'the snapshot read');
    index.apply([touch(grant('r', 'a', 5_000))], 'w1'); // delivered during the read, and in the snapshot too
    index.apply([touch(grant('r', 'b', 8_000))], 'w2');
    spicedb.release([grant('r', 'a', 5_000)]);
    await until(() => index.known, 'the snapshot');
    expect(index.size).toBe(2); // the same expiry twice counts once
    index.apply([touch(grant('r', 'c', 2_000)), touch(grant('r', 'a', 5_000))], 'w3');
    expect(index.untilEarliestExpiry('resource', 'r')).toBe(2_000);
    index.apply([remove(grant('r', 'c'))], 'w4'); // deleted: its expiry still counts until it is past
    expect(index.untilEarliestExpiry('resource', 'r')).toBe(2_000);
    expect(index.size).toBe(3);
  });

  it('answers 0 for an expiry just past (SpiceDB may still honour it), and forgets it past the grace', async () => {
    const { index, spicedb, clock } = expiries();
    index.reloadFrom('head-1');
    await until(() => spicedb.waiting === 1, 'the snapshot read');
    spicedb.release([grant('r', 'a', 1_000), grant('r', 'b', 60_000)]);
    await until(() => index.known, 'the snapshot');
    clock.now += 1_500;
    expect(index.untilEarliestExpiry('resource', 'r')).toBe(0);
    clock.now += 6_499;
    expect(index.untilEarliestExpiry('resource', 'r')).toBe(0);
    clock.now += 1;
    expect(index.untilEarliestExpiry('resource', 'r')).toBe(52_000);
    expect(index.size).toBe(1);
  });

  it('adds no expiry already past the grace: it bounds nothing', async () => {
    const { index, spicedb } = expiries();
    index.reloadFrom('head-1');
    await until(() => spicedb.waiting === 1, 'the snapshot read');
    spicedb.release([grant('r', 'a', -7_000), grant('r', 'b', -6_999)]);
    await until(() => index.known, 'the snapshot');
    index.apply([touch(grant('s', 'c', -60_000))], 'w1');
    expect(index.size).toBe(1);
    expect(index.untilEarliestExpiry('resource', 'r')).toBe(0);
    expect(index.untilEarliestExpiry('resource', 's')).toBe(Infinity);
  });

  it('reads again until a snapshot succeeds, and starts over when the Watch starts again', async () => {
    const { index, spicedb } = expiries();
    index.reloadFrom('head-1');
    await until(() => spicedb.waiting === 1, 'the snapshot read');
    spicedb.fail();
    await until(() => spicedb.waiting === 1 && spicedb.reads.length === 2, 'the second read');
    index.reloadFrom('head-2'); // e.g. a schema change: what was read or in flight no longer counts
    await until(() => spicedb.reads.length === 3, 'the read from the new start');
    spicedb.release([grant('r', 'stale', 1_000)]);
    expect(index.known).toBe(false);
    spicedb.release([grant('r', 'fresh', 2_000)]);
    await until(() => index.known, 'the snapshot');
    expect(spicedb.reads).toEqual(['head-1', 'head-1', 'head-2']);
    expect(index.untilEarliestExpiry('resource', 'r')).toBe(2_000);
    expect(index.size).toBe(1);
  });

  it('reads again, at the revision of the change that made them twice what the last read found (past the floor)', async () => {
    const { index, spicedb } = expiries(snapshots(), 4);
    index.reloadFrom('head-1');
    await until(() => spicedb.waiting === 1, 'the snapshot read');
    spicedb.release([grant('r', 'a', 1_000), grant('s', 'b', 1_000), grant('t', 'c', 1_000)]);
    await until(() => index.known, 'the snapshot');
    // The grant on r renewed again and again: each new expiry stays until it is past.
    for (const [renewal, expiresInMs] of [2_000, 3_000, 4_000].entries()) {
      index.apply([touch(grant('r', 'a', expiresInMs))], `w${renewal + 1}`);
    }
    expect(index.size).toBe(6); // twice the three read
    expect(spicedb.reads).toEqual(['head-1']);
    index.apply([touch(grant('r', 'a', 5_000))], 'w4');
    expect(spicedb.reads).toEqual(['head-1', 'w4']);
    expect(index.known).toBe(false); // allows are bounded as before the first read, until this one is done
    index.apply([touch(grant('u', 'd', 6_000))], 'w5'); // after w4: not in the snapshot, kept
    spicedb.release([grant('r', 'a', 5_000), grant('s', 'b', 1_000), grant('t', 'c', 1_000)]);
    await until(() => index.known, 'the second snapshot');
    expect(index.size).toBe(4);
    expect(index.untilEarliestExpiry('resource', 'r')).toBe(5_000);
    expect(index.untilEarliestExpiry('resource', 'u')).toBe(6_000);
  });

  it('never reads again only to shed stale expiries while there are no more than the floor', async () => {
    const { index, spicedb } = expiries(snapshots(), 10);
    index.reloadFrom('head-1');
    await until(() => spicedb.waiting === 1, 'the snapshot read');
    spicedb.release([grant('r', 'a', 1_000)]);
    await until(() => index.known, 'the snapshot');
    for (let renewal = 1; renewal < 10; renewal++) {
      index.apply([touch(grant('r', 'a', 1_000 + renewal))], `w${renewal}`);
    }
    expect(index.size).toBe(10);
    expect(spicedb.reads).toEqual(['head-1']);
    index.apply([touch(grant('r', 'a', 2_000))], 'w10');
    expect(spicedb.reads).toEqual(['head-1', 'w10']);
  });

  it('follows only the checked resources’ relationships, which are the schema’s only ones that expire', () => {
    const { index } = expiries();
    index.apply([touch({ ...grant('o', 'u', 1_000), resource: { type: 'organization', id: 'o' } })], 'w1');
    expect(index.size).toBe(0);
    expect(index.untilEarliestExpiry('organization', 'o')).toBeUndefined(); // not read yet
    const expiring = [...parseSchemaShape(readSchemaText())].flatMap(([definition, { relations }]) =>
      [...relations]
        .filter(([, types]) => types.some((type) => type.endsWith('with expiration')))
        .map(() => definition),
    );
    expect(expiring.length).toBeGreaterThan(0);
    expect(new Set(expiring)).toEqual(new Set([CHECKED_RESOURCE]));
  });
});
