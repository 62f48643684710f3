import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { asMetadataValue, SPICEDB_REQUEST_ID_KEY } from '../../../src/spicedb/spicedb-span.js';

describe('asMetadataValue', () => {
  it('keeps a printable ASCII request id as it is', () => {
    expect(asMetadataValue('bfe9eb29-ab87-4ca3-be83-a1d5d8305716 "x"')).toBe(
      'bfe9eb29-ab87-4ca3-be83-a1d5d8305716 "x"',
    );
  });

  it('percent-encodes what gRPC metadata refuses, and the percent sign, so SpiceDB gets a valid value', () => {
    const id = 'a\tb\u00ff%';
    expect(() => new Metadata().set(SPICEDB_REQUEST_ID_KEY, id)).toThrow();
    expect(asMetadataValue(id)).toBe('a%09b%ff%25');
    expect(() => new Metadata().set(SPICEDB_REQUEST_ID_KEY, asMetadataValue(id))).not.toThrow();
  });
});
