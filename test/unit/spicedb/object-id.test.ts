import { describe, expect, it } from 'vitest';
import {
  decodeObjectId,
  encodeObjectId,
  groupObjectId,
  InvalidObjectIdError,
  MAX_OBJECT_ID_BYTES,
} from '../../../src/spicedb/object-id.js';

// SpiceDB's own rule for object ids (authzed-go's validation of ObjectReference.object_id), minus `*`.
const SPICEDB_OBJECT_ID = /^[a-zA-Z0-9/_|\-=+]{1,1024}$/;

function expectInvalid(action: () => unknown, reason: InvalidObjectIdError['reason']): void {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidObjectIdError);
  expect((thrown as InvalidObjectIdError).reason).toBe(reason);
}

/** mulberry32: a small seeded generator, so that a failure can be replayed. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Code points from every UTF-8 length, the escape character and SpiceDB's special characters; no surrogates. */
function randomString(random: () => number): string {
  const ranges: [number, number][] = [
    [0x20, 0x7e], // printable ASCII, `=`, `|`, `*`, `:` included
    [0x00, 0x1f], // control characters
    [0x80, 0x7ff], // two bytes
    [0x800, 0xd7ff], // three bytes, below the surrogates
    [0xe000, 0xffff], // three bytes, above them
    [0x10000, 0x10ffff], // four bytes (astral: surrogate pairs in JavaScript)
  ];
  const specials = ['=', '|', '*', '+', ':', '/', '-', '_', '%', '=3A'];
  const length = 1 + Math.floor(random() * 24);
  let text = '';
  for (let index = 0; index < length; index++) {
    if (random() < 0.2) {
      text += specials[Math.floor(random() * specials.length)];
      continue;
    }
    const [low, high] = ranges[Math.floor(random() * ranges.length)] as [number, number];
    text += String.fromCodePoint(low + Math.floor(random() * (high - low + 1)));
  }
  return text;
}

describe('encodeObjectId', () => {
  it('keeps ids of the plain characters as they are', () => {
    expect(encodeObjectId('3f2c1e9a-0b7d-4c8e-9f10-2a3b4c5d6e7f')).toBe(
      '3f2c1e9a-0b7d-4c8e-9f10-2a3b4c5d6e7f',
    );
    expect(encodeObjectId('a/B_c-9')).toBe('a/B_c-9');
  });

  it('escapes every other byte as =XX, so URNs stay readable', () => {
    expect(encodeObjectId('urn:dx:item:1')).toBe('urn=3Adx=3Aitem=3A1');
    expect(encodeObjectId('a=b')).toBe('a=3Db');
    expect(encodeObjectId('*')).toBe('=2A');
    expect(encodeObjectId('x|y+z')).toBe('x=7Cy=2Bz');
    expect(encodeObjectId('é')).toBe('=C3=A9');
    expect(encodeObjectId('😀')).toBe('=F0=9F=98=80');
  });

  it('refuses an empty id', () => {
    expectInvalid(() => encodeObjectId(''), 'empty');
  });

  it('refuses a lone surrogate, which UTF-8 cannot carry', () => {
    expectInvalid(() => encodeObjectId('a\ud800b'), 'malformed');
    expectInvalid(() => encodeObjectId('\udc00'), 'malformed');
  });

  it(`accepts up to ${MAX_OBJECT_ID_BYTES} encoded bytes and refuses more`, () => {
    expect(encodeObjectId('a'.repeat(MAX_OBJECT_ID_BYTES))).toHaveLength(MAX_OBJECT_ID_BYTES);
    expectInvalid(() => encodeObjectId('a'.repeat(MAX_OBJECT_ID_BYTES + 1)), 'too_long');
    // 341 escapes make 1,023 bytes; 342 make 1,026.
    expect(encodeObjectId(':'.repeat(341))).toHaveLength(1023);
    expectInvalid(() => encodeObjectId(':'.repeat(342)), 'too_long');
    expectInvalid(() => encodeObjectId('é'.repeat(MAX_OBJECT_ID_BYTES)), 'too_long');
  });
});

describe('decodeObjectId', () => {
  it('inverts the examples', () => {
    expect(decodeObjectId('urn=3Adx=3Aitem=3A1')).toBe('urn:dx:item:1');
    expect(decodeObjectId('=F0=9F=98=80')).toBe('😀');
  });

  it('keeps a leading U+FEFF, which a UTF-8 decoder would drop as a byte-order mark', () => {
    expect(decodeObjectId(encodeObjectId('\ufeffa'))).toBe('\ufeffa');
  });

  it.each([
    ['empty', ''],
    ['the wildcard', '*'],
    ['a character SpiceDB allows but the encoder never writes', 'a|b'],
    ['a raw colon', 'urn:dx'],
    ['lowercase hex', 'urn=3adx'],
    ['a cut-off escape', 'abc=3'],
    ['a needless escape of a plain character', '=41'],
    ['bytes that are not UTF-8', '=C3'],
  ])('refuses %s', (_, objectId) => {
    expectInvalid(() => decodeObjectId(objectId), 'malformed');
  });
});

describe('encoding 2,000 random Unicode strings', () => {
  const random = seededRandom(20_260_101);
  const inputs = Array.from({ length: 2_000 }, () => randomString(random));

  it('gives SpiceDB object ids, never the wildcard', () => {
    for (const input of inputs) {
      const encoded = encodeObjectId(input);
      expect(encoded).toMatch(SPICEDB_OBJECT_ID);
      expect(encoded).not.toContain('*');
    }
  });

  it('decodes back to the input', () => {
    for (const input of inputs) expect(decodeObjectId(encodeObjectId(input))).toBe(input);
  });

  it('gives distinct inputs distinct outputs', () => {
    const inputByOutput = new Map<string, string>();
    for (const input of inputs) {
      const output = encodeObjectId(input);
      const earlier = inputByOutput.get(output);
      if (earlier !== undefined) expect(earlier).toBe(input);
      inputByOutput.set(output, input);
    }
    expect(inputByOutput.size).toBe(new Set(inputs).size);
  });
});

describe('groupObjectId', () => {
  it('joins the encoded organisation and group ids with |, which encoded ids never contain', () => {
    expect(groupObjectId('org-1', 'urn:group:7')).toBe('org-1|urn=3Agroup=3A7');
  });

  it('keeps a | inside an id from making two groups collide', () => {
    expect(groupObjectId('a|b', 'c')).not.toBe(groupObjectId('a', 'b|c'));
  });

  it('refuses a pair whose joined id is too long, and empty parts', () => {
    expectInvalid(() => groupObjectId('a'.repeat(600), 'b'.repeat(600)), 'too_long');
    expectInvalid(() => groupObjectId('', 'g'), 'empty');
    expectInvalid(() => groupObjectId('o', ''), 'empty');
  });
});
