import { describe, expect, it } from 'vitest';
import { zedTokenRevision } from '../../../src/spicedb/zed-token.js';

/** A protobuf length-delimited field (lengths under 128). */
const field = (number: number, bytes: Buffer) =>
  Buffer.concat([Buffer.from([(number << 3) | 2, bytes.length]), bytes]);

/** A ZedToken as SpiceDB v1.57 encodes one: DecodedZedToken{v1: {revision, datastore_unique_id_prefix, schema_hash}}. */
function zedToken(revision: string, datastore: string, schemaHash?: string): string {
  const v1 = Buffer.concat([
    field(1, Buffer.from(revision)),
    field(2, Buffer.from(datastore)),
    ...(schemaHash ? [field(3, Buffer.from(schemaHash))] : []),
  ]);
  return field(3, v1).toString('base64');
}

describe('the revision a ZedToken names', () => {
  it('is the same for a write’s token and a Watch’s token of one revision, whatever schema hash they carry', () => {
    const written = zedToken('CAIQAxgB', 'd1f0e3c2');
    const watched = zedToken('CAIQAxgB', 'd1f0e3c2', 'a-schema-hash');
    expect(written).not.toBe(watched);
    expect(zedTokenRevision(written)).toBe(zedTokenRevision(watched));
    expect(zedTokenRevision(written)).toBe('d1f0e3c2/CAIQAxgB');
  });

  it('differs between revisions, and between datastores', () => {
    const revision = zedTokenRevision(zedToken('1764000000000000001', 'd1'));
    expect(zedTokenRevision(zedToken('1764000000000000002', 'd1'))).not.toBe(revision);
    expect(zedTokenRevision(zedToken('1764000000000000001', 'd2'))).not.toBe(revision);
  });

  it('skips fields of other wire types (varint, 64-bit, 32-bit) around the one it reads', () => {
    const others = Buffer.from([0x08, 0x96, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x2d, 1, 2, 3, 4]);
    const token = Buffer.concat([others, Buffer.from(zedToken('CAIQAxgB', 'd1'), 'base64')]).toString(
      'base64',
    );
    expect(zedTokenRevision(token)).toBe('d1/CAIQAxgB');
  });

  it('is the token itself when it is not SpiceDB’s encoding', () => {
    const groupStart = Buffer.from([0x1b]).toString('base64'); // wire type 3, unused by proto3
    const withoutRevision = field(3, field(2, Buffer.from('d1'))).toString('base64');
    const truncated = Buffer.from([0x11, 1, 2]).toString('base64');
    for (const token of ['t1', 'GhUKEzE3', '', groupStart, withoutRevision, truncated]) {
      expect(zedTokenRevision(token)).toBe(token);
    }
  });
});
