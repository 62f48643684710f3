import { v1 } from '@authzed/authzed-node';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { startHealthyProcess, type ManagedProcess } from './managed-process.js';

export interface SpiceDBServer {
  process: ManagedProcess;
  /** host:port of the gRPC API, plaintext on loopback. */
  endpoint: string;
  token: string;
}

export interface SpiceDBServerOptions {
  binary: string;
  stateDir: string;
  /** Reuse an endpoint and key, e.g. to restart SpiceDB where its clients expect it. */
  port?: number;
  token?: string;
  name?: string;
}

const GRPC_NOT_FOUND = 5;

/**
 * SpiceDB with the memory datastore, gRPC on loopback behind a preshared key. Every other listener
 * (HTTP gateway, metrics, dispatch) is off so that nothing binds a fixed port, and nothing phones home.
 */
export async function startSpiceDB(options: SpiceDBServerOptions): Promise<SpiceDBServer> {
  const port = options.port ?? (await freePort());
  const token = options.token ?? randomBytes(24).toString('hex');
  const endpoint = `127.0.0.1:${port}`;
  const name = options.name ?? 'spicedb';
  const process = await startHealthyProcess(
    {
      name,
      command: options.binary,
      args: [
        'serve',
        '--datastore-engine=memory',
        `--grpc-preshared-key=${token}`,
        `--grpc-addr=${endpoint}`,
        '--http-enabled=false',
        '--metrics-enabled=false',
        '--dispatch-cluster-enabled=false',
        '--telemetry-endpoint=',
        '--skip-release-check',
        '--log-level=warn',
      ],
      logFile: join(options.stateDir, `${name}.log`),
    },
    () => spicedbAnswers(endpoint, token),
    60_000,
  );
  return { process, endpoint, token };
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
