import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';
import { asNonRoot, startHealthyProcess, type ManagedProcess } from './managed-process.js';
import type { PostgresBinaries } from './postgres-binaries.js';

export interface PostgresServer {
  process: ManagedProcess;
  port: number;
  /** The superuser's connection string (trust authentication on loopback). */
  url: string;
  /** A connection string for another database or role of this server. */
  urlFor(options: { database?: string; user?: string; password?: string }): string;
  /** Creates the database unless it exists; resolves with the superuser's connection string to it. */
  ensureDatabase(name: string): Promise<string>;
}

export interface PostgresServerOptions {
  binaries: PostgresBinaries;
  /** Holds the data folder (`postgres-data`, kept across restarts) and the log. */
  stateDir: string;
  /** Reuse a port, e.g. to start it again where its clients expect it. */
  port?: number;
  name?: string;
}

const run = promisify(execFile);
const SUPERUSER = 'postgres';

/**
 * A PostgreSQL server on loopback (TCP only, no Unix socket), durability traded for speed (fsync off) as
 * etcd is here: for tests and the development stack. The data folder is made by initdb on first start and
 * kept: started again on the same `stateDir`, the server has the data of the previous run.
 */
export async function startPostgres(options: PostgresServerOptions): Promise<PostgresServer> {
  const name = options.name ?? 'postgres';
  const dataDir = join(options.stateDir, 'postgres-data');
  await initialiseDataDir(options.binaries.initdb, dataDir);
  const port = options.port ?? (await freePort());
  const urlFor = connectionStrings(port);
  const url = urlFor({});
  const server = await startHealthyProcess(
    {
      name,
      command: options.binaries.postgres,
      args: [
        ...['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', ''],
        // fsync off: what a commit wrote survives the server's death, not the machine's. synchronous_commit
        // stays on: off, a commit acknowledged just before a kill would be lost with the server's WAL buffers.
        ...['-c', 'fsync=off', '-c', 'full_page_writes=off'],
        ...['-c', 'max_connections=200'],
        // SpiceDB's PostgreSQL datastore serves its Watch (the decision service's revision barrier) only with it.
        ...['-c', 'track_commit_timestamp=on'],
      ],
      logFile: join(options.stateDir, `${name}.log`),
      // SIGTERM would wait for every client to disconnect; SIGINT ends their sessions (fast shutdown).
      stopSignal: 'SIGINT',
      // PostgreSQL refuses to run as root.
      nonRoot: true,
    },
    () => answers(url),
    60_000,
  );
  const ensureDatabase = async (database: string) => {
    await createDatabaseUnlessExists(url, database);
    return urlFor({ database });
  };
  return { process: server, port, url, urlFor, ensureDatabase };
}

async function initialiseDataDir(initdb: string, dataDir: string): Promise<void> {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const args = ['-D', dataDir, '-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'];
  await run(...asNonRoot(initdb, [...args, '--no-instructions']));
}

function connectionStrings(port: number) {
  return (options: { database?: string; user?: string; password?: string }) => {
    const user = encodeURIComponent(options.user ?? SUPERUSER);
    const password = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}`;
    return `postgres://${user}${password}@127.0.0.1:${port}/${encodeURIComponent(options.database ?? 'postgres')}`;
  };
}

async function createDatabaseUnlessExists(serverUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}
