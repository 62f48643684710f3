import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  GENESIS_HASH,
  recordHash,
  recordMac,
  storableEntry,
  type AuditRecord,
} from '../../../src/audit/audit-record.js';
import { decodeCursor, encodeCursor } from '../../../src/audit/audit-cursor.js';
import { appendTime, MAX_CLOCK_LEAD_MS } from '../../../src/audit/audit-store.js';
import { linkBreaks, macBreaks, type Link } from '../../../src/audit/chain-verifier.js';

function record(id: string, prevHash: string, detail?: string): AuditRecord {
  const unsigned = {
    id,
    time: '2026-01-01T00:00:00.000Z',
    actor: { type: 'user' as const, id: 'u1' },
    action: 'policy.created',
    target: { kind: 'policy', id: `p${id}` },
    outcome: { status: 201, ...(detail === undefined ? {} : { detail }) },
    requestId: 'r1',
    prevHash,
  };
  return { ...unsigned, hash: recordHash(unsigned) };
}

const genesis: Link = { id: '0', hash: GENESIS_HASH };

describe('canonical encoding', () => {
  it('sorts keys at every level and leaves out absent fields', () => {
    expect(canonicalJson({ b: 1, a: { d: undefined, c: [2, { f: 'x', e: null }] } })).toBe(
      '{"a":{"c":[2,{"e":null,"f":"x"}]},"b":1}',
    );
  });

  it('gives one hash per content, whatever the key order', () => {
    const first = record('1', GENESIS_HASH);
    const { hash, ...content } = first;
    const reordered = Object.fromEntries(Object.entries(content).reverse()) as typeof content;
    expect(recordHash(reordered)).toBe(hash);
  });
});

describe('chain links', () => {
  it('holds for consecutive records, each carrying the hash before it', () => {
    const first = record('1', GENESIS_HASH);
    expect(linkBreaks(genesis, first)).toEqual([]);
    expect(linkBreaks(first, record('2', first.hash))).toEqual([]);
  });

  it('finds an edited record', () => {
    const edited = { ...record('1', GENESIS_HASH), outcome: { status: 201, detail: 'rewritten' } };
    expect(linkBreaks(genesis, edited)).toEqual([expect.objectContaining({ id: '1', reason: 'altered' })]);
  });

  it('finds deleted records by the gap in ids', () => {
    const first = record('1', GENESIS_HASH);
    const breaks = linkBreaks(first, record('4', 'whatever'));
    expect(breaks).toEqual([{ id: '4', reason: 'missing', detail: 'record(s) 2..3 before 4 are missing' }]);
  });

  it('finds a predecessor rewritten with a fresh hash of its own', () => {
    const rewritten = record('1', GENESIS_HASH, 'rewritten');
    const next = record('2', record('1', GENESIS_HASH).hash);
    expect(linkBreaks(rewritten, next)).toEqual([expect.objectContaining({ id: '2', reason: 'unlinked' })]);
  });

  it('starts after retention from the anchor: the last pruned record', () => {
    const pruned = record('7', 'earlier');
    expect(linkBreaks({ id: pruned.id, hash: pruned.hash }, record('8', pruned.hash))).toEqual([]);
  });

  it('finds a record dated before its predecessor', () => {
    const first = record('1', GENESIS_HASH);
    const later = { ...first, time: '2026-01-01T00:00:01.000Z' };
    expect(linkBreaks(later, record('2', first.hash))).toEqual([
      expect.objectContaining({ id: '2', reason: 'time' }),
    ]);
  });
});

describe('MACs under the chain key', () => {
  const key = Buffer.from('k'.repeat(32));
  const first = record('1', GENESIS_HASH);

  it('holds for the MAC of the hash, and only under the same key', () => {
    expect(macBreaks(key, first, recordMac(key, first.hash))).toEqual([]);
    const otherKey = recordMac(Buffer.from('o'.repeat(32)), first.hash);
    expect(macBreaks(key, first, otherKey)).toEqual([expect.objectContaining({ id: '1', reason: 'forged' })]);
  });

  it('finds a record whose hash was recomputed after a rewrite, and a record without a MAC', () => {
    const mac = recordMac(key, first.hash);
    const rewritten = record('1', GENESIS_HASH, 'rewritten');
    expect(macBreaks(key, rewritten, mac)).toEqual([expect.objectContaining({ reason: 'forged' })]);
    expect(macBreaks(key, first, null)).toEqual([expect.objectContaining({ reason: 'unkeyed' })]);
    expect(macBreaks(key, first, 'not hex')).toEqual([expect.objectContaining({ reason: 'forged' })]);
  });
});

describe('the time of an appended record', () => {
  const now = new Date('2026-01-01T00:00:00.000Z');

  it('is PostgreSQL’s clock, or its predecessor’s time when the clock is behind', () => {
    expect(appendTime(now, null)).toBe(now.getTime());
    expect(appendTime(now, new Date(now.getTime() - 1_000))).toBe(now.getTime());
    expect(appendTime(now, new Date(now.getTime() + 1_000))).toBe(now.getTime() + 1_000);
  });

  it('refuses to follow a predecessor dated further ahead than the bound', () => {
    expect(appendTime(now, new Date(now.getTime() + MAX_CLOCK_LEAD_MS))).toBe(
      now.getTime() + MAX_CLOCK_LEAD_MS,
    );
    expect(() => appendTime(now, new Date(now.getTime() + MAX_CLOCK_LEAD_MS + 1))).toThrow(
      /correct the clock/,
    );
  });
});

describe('the keyset cursor', () => {
  it('round-trips an id and refuses anything else', () => {
    expect(decodeCursor(encodeCursor('42'))).toBe('42');
    for (const text of [
      'not-ours',
      Buffer.from('{"before":"0"}').toString('base64url'),
      Buffer.from('{"before":1}').toString('base64url'),
    ]) {
      expect(decodeCursor(text)).toBeUndefined();
    }
  });
});

describe('storableEntry', () => {
  it('replaces U+0000, which PostgreSQL text cannot hold, in every string and keeps the rest', () => {
    const entry = {
      actor: { type: 'user' as const, id: 'u1' },
      action: 'membership.replaced',
      target: { kind: 'group', id: 'org/\u0000', organisationId: '\u0000a' },
      outcome: { status: 403, detail: 'no' },
      requestId: 'r1',
    };
    expect(storableEntry(entry)).toEqual({
      ...entry,
      target: { kind: 'group', id: 'org/\ufffd', organisationId: '\ufffda' },
    });
  });
});
