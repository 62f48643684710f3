import { v1 } from '@authzed/authzed-node';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { startHealthyProcess, type ManagedProcess } from './managed-process.js';

export interface SpiceDBServer {
  process: ManagedProcess;
  /** host:port of the gRPC API, plaintext on loopback. */
  endpoint: string;
  token: string;
}

/**
 * Where SpiceDB keeps its relationships: in memory (gone when the process ends), or in a PostgreSQL database
 * (kept; the server needs `track_commit_timestamp=on` for the Watch, which `startPostgres` sets).
 */
export type SpiceDBDatastore = { engine: 'memory' } | { engine: 'postgres'; url: string };

export interface SpiceDBServerOptions {
  binary: string;
  stateDir: string;
  /** Default: memory. */
  datastore?: SpiceDBDatastore;
  /** Reuse an endpoint and key, e.g. to restart SpiceDB where its clients expect it. */
  port?: number;
  token?: string;
  name?: string;
  /** More `spicedb serve` flags, e.g. `--datastore-readonly`. */
  extraArgs?: string[];
  /** Migrate a PostgreSQL datastore to head before serving (default). false: a role that may only read it. */
  migrate?: boolean;
}

const GRPC_NOT_FOUND = 5;
const run = promisify(execFile);

// A development or test SpiceDB shares its PostgreSQL server with others (max_connections 200): small pools
// instead of SpiceDB's 20 readers and 10 writers, each opened at start.
const SMALL_CONNECTION_POOLS = [
  '--datastore-conn-pool-read-max-open=8',
  '--datastore-conn-pool-read-min-open=1',
  '--datastore-conn-pool-write-max-open=4',
  '--datastore-conn-pool-write-min-open=1',
];

/**
 * SpiceDB on the given datastore, gRPC on loopback behind a preshared key. Every other listener (HTTP gateway,
 * metrics, dispatch) is off so that nothing binds a fixed port, and nothing phones home. On PostgreSQL the
 * database is migrated to SpiceDB's head first (a no-op when it is there already).
 */
export async function startSpiceDB(options: SpiceDBServerOptions): Promise<SpiceDBServer> {
  const datastore = options.datastore ?? { engine: 'memory' };
  if (datastore.engine === 'postgres' && options.migrate !== false)
    await migrateDatastore(options.binary, datastore);
  const port = options.port ?? (await freePort());
  const token = options.token ?? randomBytes(24).toString('hex');
  const endpoint = `127.0.0.1:${port}`;
  const name = options.name ?? 'spicedb';
  const process = await startHealthyProcess(
    {
      name,
      command: options.binary,
      env: datastoreEnvironment(datastore),
      args: [
        'serve',
        ...datastoreFlags(datastore),
        `--grpc-preshared-key=${token}`,
        `--grpc-addr=${endpoint}`,
        '--http-enabled=false',
        '--metrics-enabled=false',
        '--dispatch-cluster-enabled=false',
        '--telemetry-endpoint=',
        '--skip-release-check',
        '--log-level=warn',
        ...(options.extraArgs ?? []),
      ],
      logFile: join(options.stateDir, `${name}.log`),
    },
    () => spicedbAnswers(endpoint, token),
    60_000,
  );
  return { process, endpoint, token };
}

function datastoreFlags(datastore: SpiceDBDatastore): string[] {
  if (datastore.engine === 'memory') return ['--datastore-engine=memory'];
  return [
    '--datastore-engine=postgres',
    ...SMALL_CONNECTION_POOLS,
    // SpiceDB polls PostgreSQL for the Watch at this period (default 1 s), as docs/install.md advises production.
    '--watch-api-heartbeat=100ms',
  ];
}

/** The connection string in SpiceDB's environment, not on its command line, where `ps` would show a password. */
function datastoreEnvironment(datastore: SpiceDBDatastore): NodeJS.ProcessEnv {
  const url = datastore.engine === 'postgres' ? datastore.url : undefined;
  return { ...process.env, SPICEDB_DATASTORE_CONN_URI: url };
}

/** `spicedb datastore migrate head`: creates SpiceDB's tables in an empty database, else brings them up to date. */
async function migrateDatastore(binary: string, datastore: SpiceDBDatastore): Promise<void> {
  const args = ['datastore', 'migrate', 'head', '--datastore-engine=postgres', '--skip-release-check'];
  try {
    await run(binary, [...args, '--log-level=warn'], {
      env: datastoreEnvironment(datastore),
      timeout: 120_000,
    });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`spicedb datastore migrate head failed: ${stderr?.trim().slice(-2_000) ?? ''}`, {
      cause: error,
    });
  }
}

async function spicedbAnswers(endpoint: string, token: string): Promise<boolean> {
  const client = v1.NewClient(token, endpoint, v1.ClientSecurity.INSECURE_PLAINTEXT_CREDENTIALS);
  try {
    await client.promises.readSchema(v1.ReadSchemaRequest.create({}));
    return true;
  } catch (error) {
    return (error as { code?: number }).code === GRPC_NOT_FOUND; // no schema yet, but it answered
  } finally {
    client.close();
  }
}
