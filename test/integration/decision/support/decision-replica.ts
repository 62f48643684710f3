import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../../../../dev/localplane/free-port.js';
import { startHealthyProcess } from '../../../../dev/localplane/managed-process.js';
import type { ManagedProcess } from '../../../../dev/localplane/managed-process.js';
import { repoRoot } from '../../../../dev/localplane/repo-root.js';
import { AUDIENCE, ISSUER, jwksOf } from '../../../unit/auth/support/tokens.js';
import type { TestKey } from '../../../unit/auth/support/tokens.js';

const STARTUP_TIMEOUT_MS = 120_000;

export interface ReplicaOptions {
  name: string;
  stateDir: string;
  spicedb: { endpoint: string; token: string };
  /** Callers' tokens are signed with it. */
  key: TestKey;
  /** SHUTDOWN_DRAIN_SECONDS. */
  drainSeconds: number;
}

export interface DecisionReplica {
  port: number;
  process: ManagedProcess;
}

/** The decision service's real entrypoint as a process of its own on loopback, started once ready. */
export async function startDecisionReplica(options: ReplicaOptions): Promise<DecisionReplica> {
  const jwksFile = join(options.stateDir, `${options.name}.jwks.json`);
  await writeFile(jwksFile, JSON.stringify(jwksOf(options.key)));
  const port = await freePort();
  const ready = async () => (await fetch(`http://127.0.0.1:${port}/healthz/ready`)).status === 200;
  const process = await startHealthyProcess(
    {
      name: options.name,
      command: globalThis.process.execPath,
      args: ['--import', 'tsx', join(repoRoot(), 'src/cmd/decision-service.ts')],
      logFile: join(options.stateDir, `${options.name}.log`),
      env: {
        ...globalThis.process.env,
        DECISION_HOST: '127.0.0.1',
        DECISION_PORT: String(port),
        SPICEDB_ENDPOINT: options.spicedb.endpoint,
        SPICEDB_TOKEN: options.spicedb.token,
        SPICEDB_TLS: 'plaintext',
        JWKS_FILE: jwksFile,
        JWT_ISSUER: ISSUER,
        JWT_AUDIENCE: AUDIENCE,
        SHUTDOWN_DRAIN_SECONDS: String(options.drainSeconds),
      },
    },
    ready,
    STARTUP_TIMEOUT_MS,
  );
  return { port, process };
}
