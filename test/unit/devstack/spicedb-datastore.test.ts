import { describe, expect, it } from 'vitest';
import type { LocalPostgres } from '../../../dev/stack/local-postgres.js';
import type { PostgresServer } from '../../../dev/localplane/postgres-server.js';
import { datastoreChoice, spicedbDatastore } from '../../../dev/stack/spicedb-datastore.js';

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

describe('the datastore SpiceDB is started on', () => {
  /** A stand-in for the stack's server that records the databases asked for, and whether it was started. */
  function fakePostgres() {
    const asked: string[] = [];
    const server = {
      ensureDatabase: async (name: string) => {
        asked.push(name);
        return `postgres://postgres@127.0.0.1:5432/${name}`;
      },
    } as unknown as PostgresServer;
    let started = false;
    const postgres: LocalPostgres = {
      server: async () => {
        started = true;
        return server;
      },
      stop: async () => undefined,
    };
    return { postgres, asked, started: () => started };
  }

  it("is a database `spicedb` of the stack's server for postgres without a URL", async () => {
    const fake = fakePostgres();
    expect(await spicedbDatastore({ engine: 'postgres' }, fake.postgres)).toEqual({
      engine: 'postgres',
      url: 'postgres://postgres@127.0.0.1:5432/spicedb',
    });
    expect(fake.asked).toEqual(['spicedb']);
  });

  it("starts no server for memory or a URL of the caller's", async () => {
    const fake = fakePostgres();
    expect(await spicedbDatastore({ engine: 'memory' }, fake.postgres)).toEqual({ engine: 'memory' });
    const url = 'postgres://db.example/spicedb';
    expect(await spicedbDatastore({ engine: 'postgres', url }, fake.postgres)).toEqual({
      engine: 'postgres',
      url,
    });
    expect(fake.started()).toBe(false);
  });
});
