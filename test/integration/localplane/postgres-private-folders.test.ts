import { cp, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { resolvePostgresBinaries } from '../../../dev/localplane/postgres-binaries.js';
import { startPostgres, type PostgresServer } from '../../../dev/localplane/postgres-server.js';

// A clean clone may sit under a folder only its owner can enter (mktemp -d makes 0700), and CI runs as root,
// which PostgreSQL refuses to be: the server must still reach its binaries and its data there, and keep its
// data across a restart. Here both live under a 0700 folder (the binaries copied from the npm package).
let privateRoot: string;
let server: PostgresServer | undefined;

afterAll(async () => {
  await server?.process.stop();
  await rm(privateRoot, { recursive: true, force: true });
});

async function rows(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('PostgreSQL under folders only their owner may enter', () => {
  it('initialises, serves, and keeps its data across a restart', async () => {
    privateRoot = await mkdtemp(join(tmpdir(), 'policy-grant-private-'));
    expect((await stat(privateRoot)).mode & 0o077).toBe(0);
    const shipped = await resolvePostgresBinaries({});
    const native = join(privateRoot, 'native');
    await cp(dirname(dirname(shipped.postgres)), native, { recursive: true, verbatimSymlinks: true });
    const binaries = { initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres') };
    const stateDir = join(privateRoot, 'state');

    server = await startPostgres({ binaries, stateDir, name: 'private-postgres' });
    await rows(server.url, 'CREATE TABLE kept (value text); INSERT INTO kept VALUES ($$across restarts$$)');
    await server.process.stop();
    server = await startPostgres({ binaries, stateDir, name: 'private-postgres' });
    expect(await rows(server.url, 'SELECT value FROM kept')).toEqual([{ value: 'across restarts' }]);
  });
});
