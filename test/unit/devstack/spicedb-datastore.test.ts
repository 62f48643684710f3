import { describe, expect, it } from 'vitest';
import { datastoreChoice } from '../../../src/devstack/spicedb-datastore.js';

describe("the development stack's SpiceDB datastore", () => {
  it('is memory by default', () => {
    expect(datastoreChoice({})).toEqual({ engine: 'memory' });
    expect(datastoreChoice({ SPICEDB_DATASTORE: '' })).toEqual({ engine: 'memory' });
  });

  it("is the stack's own PostgreSQL with SPICEDB_DATASTORE=postgres", () => {
    expect(datastoreChoice({ SPICEDB_DATASTORE: 'postgres' })).toEqual({ engine: 'postgres' });
  });

  it('is an existing database with SPICEDB_DATASTORE_URL, postgres implied', () => {
    const url = 'postgres://spicedb:secret@db.example:5432/spicedb';
    expect(datastoreChoice({ SPICEDB_DATASTORE_URL: url })).toEqual({ engine: 'postgres', url });
    expect(datastoreChoice({ SPICEDB_DATASTORE: 'postgres', SPICEDB_DATASTORE_URL: url })).toEqual({
      engine: 'postgres',
      url,
    });
  });

  it('refuses other engines, a URL for memory and a URL that is not PostgreSQL, naming the variable', () => {
    expect(() => datastoreChoice({ SPICEDB_DATASTORE: 'cockroachdb' })).toThrow(/SPICEDB_DATASTORE must be/);
    expect(() =>
      datastoreChoice({ SPICEDB_DATASTORE: 'memory', SPICEDB_DATASTORE_URL: 'postgres://h/db' }),
    ).toThrow(/SPICEDB_DATASTORE_URL is for SPICEDB_DATASTORE=postgres/);
    expect(() => datastoreChoice({ SPICEDB_DATASTORE_URL: 'mysql://h/db' })).toThrow(
      /SPICEDB_DATASTORE_URL must be a postgres/,
    );
  });
});
