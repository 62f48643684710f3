import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalControlPlane, type LocalControlPlane } from '../../../dev/localplane/control-plane.js';
import { resolvePostgresBinaries } from '../../../dev/localplane/postgres-binaries.js';
import { startPostgres, type PostgresServer } from '../../../dev/localplane/postgres-server.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import type { ControlPlaneInfo } from './control-plane-info.js';

type Datastore = ControlPlaneInfo['spicedbDatastore'];

/** The `integration` and `chaos` projects: SpiceDB on the memory datastore. */
export default integrationSetup('memory');

/**
 * One real control plane (etcd, kube-apiserver, SpiceDB on `datastore`) and one PostgreSQL server for the
 * whole run; test files isolate themselves by namespace, ids and databases. On `postgres` the shared SpiceDB
 * keeps its data in the server's database `spicedb`, and the SpiceDBs that test files start get databases of
 * their own there. USE_EXISTING_CLUSTER=true (envtest's switch) runs against KUBECONFIG,
 * SPICEDB_ENDPOINT/SPICEDB_TOKEN and TEST_DATABASE_URL instead.
 */
export function integrationSetup(datastore: Datastore) {
  return async (project: TestProject) => {
    if (process.env.USE_EXISTING_CLUSTER === 'true') {
      project.provide('controlPlane', existingCluster(datastore));
      return;
    }
    const started = Date.now();
    const stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-it-'));
    const { plane, postgres } = await startParts(stateDir, datastore);
    await writeProjectSchema(plane.spicedb);
    console.log(
      `[control-plane] ready in ${Date.now() - started} ms (SpiceDB on ${datastore}); ` +
        `logs: ${plane.logFiles.join(', ')}`,
    );
    project.provide('controlPlane', {
      kubeconfigPath: plane.kubeconfigPath,
      spicedbEndpoint: plane.spicedb?.endpoint ?? '',
      spicedbToken: plane.spicedb?.token ?? '',
      stateDir,
      logFiles: [...plane.logFiles, postgres.process.logFile],
      tools: { ...plane.tools },
      postgresUrl: postgres.url,
      spicedbDatastore: datastore,
    });
    return async () => {
      await plane.stop();
      await postgres.process.stop();
      // Logs stay for a look after a failure; the data does not.
      for (const data of ['etcd-data', 'postgres-data']) {
        await rm(join(stateDir, data), { recursive: true, force: true });
      }
    };
  };
}

/** On memory both start at once; SpiceDB on PostgreSQL needs the server first. */
async function startParts(
  stateDir: string,
  datastore: Datastore,
): Promise<{ plane: LocalControlPlane; postgres: PostgresServer }> {
  const log = (m: string) => console.log(`[control-plane] ${m}`);
  const startServer = async () => startPostgres({ binaries: await resolvePostgresBinaries(), stateDir });
  if (datastore === 'memory') {
    const [plane, postgres] = await Promise.all([startLocalControlPlane({ stateDir, log }), startServer()]);
    return { plane, postgres };
  }
  const postgres = await startServer();
  try {
    const url = await postgres.ensureDatabase('spicedb');
    const plane = await startLocalControlPlane({
      stateDir,
      log,
      spicedbDatastore: { engine: 'postgres', url },
    });
    return { plane, postgres };
  } catch (error) {
    await postgres.process.stop();
    throw error;
  }
}

/** Every test file shares SpiceDB, and a SpiceDB schema is global: write the project's once, here. */
async function writeProjectSchema(spicedb: { endpoint: string; token: string } | undefined): Promise<void> {
  if (!spicedb) return;
  const client = new SpiceDBClient({
    endpoint: spicedb.endpoint,
    token: spicedb.token,
    transport: 'plaintext',
  });
  try {
    await client.ensureSchema(readSchemaText());
  } finally {
    client.close();
  }
}

function existingCluster(datastore: Datastore): ControlPlaneInfo {
  const required = (name: string) => {
    const value = process.env[name];
    if (!value) throw new Error(`USE_EXISTING_CLUSTER=true needs ${name}`);
    return value;
  };
  return {
    kubeconfigPath: required('KUBECONFIG'),
    spicedbEndpoint: required('SPICEDB_ENDPOINT'),
    spicedbToken: required('SPICEDB_TOKEN'),
    stateDir: '',
    logFiles: [],
    tools: {},
    postgresUrl: required('TEST_DATABASE_URL'),
    spicedbDatastore: datastore,
  };
}
