import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDevSigningKey } from '../../../dev/tokens/dev-signing-key.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER } from '../../../dev/tokens/dev-token.js';
import type { LaunchedService } from '../../../dev/stack/service-launcher.js';
import { serviceProcesses } from '../../../dev/stack/service-processes.js';
import { metricValue } from '../../../src/observability/metric-text.js';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { controlPlane, createTestNamespace, uniqueId } from '../support/cluster.js';
import { testDatabase } from '../support/database.js';
import { startOwnSpiceDB, testControllerEnv, type OwnSpiceDB } from '../controller/support/harness.js';

// The development stack's other way of running the services (bench:soak reads each one's memory): each in a
// process of its own, at the URL it reports, with the same environment as in process. Their real /metrics
// follow the naming conventions: `policygrant_*` beside the standard families, and the build info. The
// controller gets a SpiceDB of its own and a label selector no grant carries: its resync must not touch what
// other files test.

let stateDir: string;
let spicedb: OwnSpiceDB;
let namespace: string;
let sharedEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-service-processes-'));
  spicedb = await startOwnSpiceDB(stateDir, 'spicedb-service-processes');
  namespace = await createTestNamespace('service-processes');
  const key = await ensureDevSigningKey(stateDir);
  sharedEnv = {
    ...process.env,
    KUBECONFIG: controlPlane().kubeconfigPath,
    ACL_NAMESPACE: namespace,
    JWKS_FILE: key.jwksPath,
    JWT_ISSUER: DEV_TOKEN_ISSUER,
    JWT_AUDIENCE: DEV_TOKEN_AUDIENCE,
    LOG_LEVEL: 'warn',
    BUILD_REVISION: 'service-processes-revision',
  };
});

afterAll(async () => {
  await spicedb?.stop();
  await rm(stateDir, { recursive: true, force: true });
});

const isRunning = (pid: number) => existsSync(`/proc/${pid}`);

const packageVersion = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

async function metricsOf(service: LaunchedService): Promise<string> {
  return (await fetch(`${service.rootUrl}/metrics`)).text();
}

/** The families with standard names: controller-runtime's, client-go's, prom-client's process metrics. */
const STANDARD_FAMILY = /^(controller_runtime_|workqueue_|leader_election_master_status$|process_|nodejs_)/;

/** Every family a scrape declares (`# TYPE <name> <type>`), whether or not it has a series yet. */
function families(metrics: string): string[] {
  return [...metrics.matchAll(/^# TYPE (\S+) /gm)].map(([, name = '']) => name);
}

/**
 * Every metric of the application's own is `policygrant_*`, beside the standard families, and the build is
 * named: package.json's version, the revision the image sets, the Node.js runtime.
 */
function expectConventionalMetrics(metrics: string): void {
  const own = families(metrics).filter((name) => !STANDARD_FAMILY.test(name));
  expect(own.length).toBeGreaterThan(1);
  expect(own.filter((name) => !name.startsWith('policygrant_'))).toEqual([]);
  expect(metrics).toContain(
    `policygrant_build_info{version="${packageVersion}",revision="service-processes-revision",` +
      `node="${process.version}"} 1`,
  );
}

/** Its own process, ready at its root, with the process metrics the soak reads; gone once stopped. */
async function expectOwnProcess(service: LaunchedService): Promise<void> {
  expect(service.pid).not.toBe(process.pid);
  expect(isRunning(service.pid)).toBe(true);
  expect((await fetch(`${service.rootUrl}/healthz/ready`)).status).toBe(200);
  const metrics = await metricsOf(service);
  expect(metrics).toContain('nodejs_eventloop_lag_p99_seconds');
  expectConventionalMetrics(metrics);
}

async function expectStopped(service: LaunchedService): Promise<void> {
  await service.stop();
  expect(isRunning(service.pid)).toBe(false);
}

describe('the services as processes of their own', () => {
  it('runs the decision service and the ACL API each in its own process, the API under its base path', async () => {
    const spicedbEnv = {
      SPICEDB_ENDPOINT: spicedb.server.endpoint,
      SPICEDB_TOKEN: spicedb.server.token,
      SPICEDB_TLS: 'plaintext',
    };
    const database = await testDatabase('service_processes');
    const launcher = serviceProcesses(stateDir);
    const [decision, acl] = await Promise.all([
      launcher.decisionService({
        ...sharedEnv,
        ...spicedbEnv,
        DECISION_HOST: '127.0.0.1',
        DECISION_PORT: '0',
      }),
      launcher.aclApi({
        ...sharedEnv,
        ACL_HOST: '127.0.0.1',
        ACL_PORT: '0',
        DATABASE_URL: database.url,
      }),
    ]);
    try {
      await expectOwnProcess(decision);
      await expectOwnProcess(acl);
      expect(decision.url).toBe(decision.rootUrl);
      expect(acl.url).toBe(`${acl.rootUrl}/v2`);
      expect(new Set([process.pid, decision.pid, acl.pid]).size).toBe(3);
    } finally {
      await Promise.all([expectStopped(decision), expectStopped(acl)]);
    }
  });

  it('runs the controller in its own process and sees its first resync from outside', async () => {
    const scope = uniqueId('service-processes');
    const env = testControllerEnv({
      spicedb: { endpoint: spicedb.server.endpoint, token: spicedb.server.token },
      aclNamespace: namespace,
      scope,
      logFile: join(stateDir, 'controller.log'),
      env: { LOG_LEVEL: 'warn' },
    });
    const controller = await serviceProcesses(stateDir).controller({ ...sharedEnv, ...env });
    try {
      await expectOwnProcess(controller);
      await controller.waitForFirstResync(POLL_TIMEOUT_MS);
      const metrics = await metricsOf(controller);
      expect(metricValue(metrics, 'policygrant_resync_duration_seconds_count')).toBeGreaterThan(0);
    } finally {
      await expectStopped(controller);
    }
  });
});
