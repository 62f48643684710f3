import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyGrant } from '../../src/api/v1alpha1/index.js';
import { freePort } from '../../dev/localplane/free-port.js';
import { SpiceDBClient, type Relationship } from '../../src/spicedb/client.js';
import { encodeObjectId } from '../../src/spicedb/object-id.js';
import { readLogTail } from '../../dev/localplane/log-tail.js';
import {
  assertNoProcessLeft,
  processesOfStack,
  spawnDevStack,
  waitUntilReady,
  type DevStackPorts,
  type DevStackProcess,
} from './support/dev-stack-process.js';
import type { E2eEnvironment } from './support/e2e-environment.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { e2e, eventually, stackClient } from './support/stack-client.js';
import { occupyPort } from '../integration/localplane/occupied-port.js';

// A stack of its own, restarted in one state folder on the same ports (so one gateway serves every start),
// as a developer's `npm start`, Ctrl-C, `npm start` in one checkout does. The steps build on each other. Its
// SpiceDB keeps its data in the stack's PostgreSQL (SPICEDB_DATASTORE=postgres), as in production; the suite's
// other stack runs it on memory.
let stateDir: string;
let ports: DevStackPorts;
let stack: DevStackProcess | undefined;
let gateway: Gateway | undefined;
let environment: E2eEnvironment;
const client = stackClient(() => environment);

let owner: string;
/** An enforcement point: only those may call the check. */
let checker: string;
let consumer: string;
let policyId: string;
/** Written into SpiceDB directly: nothing but SpiceDB's datastore keeps it across a restart. */
let unmanaged: Relationship;
let spicedbOfStack: { endpoint: string; token: string };

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-e2e-restart-'));
  ports = { acl: await freePort(), decision: await freePort(), controller: await freePort() };
});

afterAll(async () => {
  await gateway?.close();
  if (stack?.process.isRunning()) {
    await stack.signal('SIGINT');
    await assertNoProcessLeft(stack);
  }
  await rm(stateDir, { recursive: true, force: true });
});

async function start(): Promise<void> {
  const startedAt = Date.now();
  stack = spawnDevStack(stateDir, ports, { SPICEDB_DATASTORE: 'postgres' });
  const env = await waitUntilReady(stack, startedAt);
  spicedbOfStack = { endpoint: env.SPICEDB_ENDPOINT, token: env.SPICEDB_TOKEN };
  gateway ??= await startGateway([
    { prefix: '/acl', upstream: env.ACL_URL },
    { prefix: '/v1', upstream: `${env.DECISION_URL}/v1` },
  ]);
  environment = {
    gatewayUrl: gateway.url,
    aclUrl: env.ACL_URL,
    decisionUrl: env.DECISION_URL,
    controllerUrl: env.CONTROLLER_URL,
    kubeconfig: env.KUBECONFIG,
    kubectl: e2e().kubectl,
    namespace: env.NAMESPACE,
    stateDir,
  };
}

/** A relation the controller does not manage (its resync leaves it alone), on the sample item. */
async function writeUnmanagedRelationship(): Promise<Relationship> {
  const relationship: Relationship = {
    resource: { type: 'resource', id: encodeObjectId((await client.sampleItem()).itemId) },
    relation: 'editor',
    subject: { type: 'user', id: randomUUID() },
  };
  await withSpiceDB((spicedb) => spicedb.writeRelationships([{ operation: 'touch', relationship }]));
  return relationship;
}

/** The subjects of the unmanaged relation, read from the running stack's SpiceDB. */
function unmanagedSubjects(): Promise<string[]> {
  return withSpiceDB(async (spicedb) => {
    const subjects: string[] = [];
    const filter = { resourceType: 'resource', resourceId: unmanaged.resource.id, relation: 'editor' };
    for await (const page of spicedb.readRelationships(filter)) {
      subjects.push(...page.relationships.map((r) => r.subject.id));
    }
    return subjects;
  });
}

async function withSpiceDB<T>(use: (spicedb: SpiceDBClient) => Promise<T>): Promise<T> {
  const spicedb = new SpiceDBClient({ ...spicedbOfStack, transport: 'plaintext' });
  try {
    return await use(spicedb);
  } finally {
    spicedb.close();
  }
}

function running(): DevStackProcess {
  if (!stack) throw new Error('no development stack started');
  return stack;
}

async function checkAllowed(userId: string): Promise<boolean> {
  return client.userAllowed(checker, userId, (await client.sampleItem()).itemId);
}

const becomesAllowed = (userId: string) =>
  eventually(
    `check for ${userId} to allow`,
    async () => ((await checkAllowed(userId)) ? true : undefined),
    60_000,
  );

async function grantByPolicyId(id: string): Promise<PolicyGrant | undefined> {
  const list = await client.kubectlJson<{ items: PolicyGrant[] }>(
    'get',
    'policygrants',
    '-n',
    environment.namespace,
  );
  return list.items.find((grant) => grant.metadata?.uid === id);
}

describe('npm start, stopped and started again in the same state folder', () => {
  it(
    'keeps a grant made before Ctrl-C, and enforces it after the restart',
    { timeout: 300_000 },
    async () => {
      await start();
      const group = await processesOfStack(running());
      expect(group).toContain(running().process.pid);
      expect(group.length).toBeGreaterThanOrEqual(4); // the stack, etcd, kube-apiserver, SpiceDB
      const parties = await client.sampleItemParties();
      const item = parties.item;
      ({ owner, checker } = parties);
      consumer = randomUUID();
      const created = await client.acl<{ results: { policyId: string }[] }>('/policy', {
        method: 'POST',
        token: owner,
        body: {
          request: [
            {
              policyType: 'INDIVIDUAL',
              userId: consumer,
              itemId: item.itemId,
              itemType: item.itemType,
              expiryTime: new Date(Date.now() + 365 * 86_400_000).toISOString(),
              constraints: { access: [{ accessType: 'api' }] },
            },
          ],
        },
      });
      expect(created.status).toBe(201);
      policyId = (created.body.results[0] as { policyId: string }).policyId;
      await becomesAllowed(consumer);
      unmanaged = await writeUnmanagedRelationship();

      expect(await running().signal('SIGINT')).toBe(0);
      await assertNoProcessLeft(running());
      expect(existsSync(running().envFile)).toBe(false);

      await start();
      expect((await grantByPolicyId(policyId))?.spec.userId).toBe(consumer);
      await becomesAllowed(consumer);
      expect(await checkAllowed(randomUUID())).toBe(false);
      expect(await unmanagedSubjects()).toEqual([unmanaged.subject.id]);
    },
  );

  it(
    'when killed, leaves state behind; a start that fails then stops what it started and leaves no env',
    { timeout: 300_000 },
    async () => {
      expect(await running().signal('SIGKILL')).toBe('SIGKILL');
      await assertNoProcessLeft(running());
      expect(existsSync(running().envFile)).toBe(true); // stale: it still says "ready"

      const blocker = await occupyPort(ports.acl);
      try {
        await expect(start()).rejects.toThrow(/exited with 1/);
        await assertNoProcessLeft(running());
        expect(await readLogTail(running().process.logFile)).toContain('EADDRINUSE');
        expect(existsSync(running().envFile)).toBe(false);
      } finally {
        await blocker.release();
      }
    },
  );

  it(
    'comes up after the crash and the failed start, and still enforces the grant',
    { timeout: 300_000 },
    async () => {
      await start();
      expect((await grantByPolicyId(policyId))?.spec.userId).toBe(consumer);
      await becomesAllowed(consumer);
      expect(await unmanagedSubjects()).toEqual([unmanaged.subject.id]);
    },
  );
});
