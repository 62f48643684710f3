import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import {
  CATALOG_ITEM_KIND,
  CATALOG_ITEM_RESOURCE,
  ENFORCED_CONDITION,
  findStatusCondition,
  GROUP_VERSION,
  MEMBERSHIP_KIND,
  MEMBERSHIP_RESOURCE,
  membershipName,
  POLICY_GRANT_KIND,
  POLICY_GRANT_RESOURCE,
  type CatalogItem,
  type CatalogItemSpec,
  type Condition,
  type Membership,
  type MembershipSpec,
  type PolicyGrant,
  type PolicyGrantSpec,
} from '../../../../src/api/v1alpha1/index.js';
import {
  controllerConfigFromEnvironment,
  type ControllerEnvironment,
} from '../../../../src/controller/controller-config.js';
import { startController, type RunningController } from '../../../../src/controller/start-controller.js';
import { createLogger } from '../../../../src/observability/logger.js';
import { freePort } from '../../../../dev/localplane/free-port.js';
import { startProcess, type ManagedProcess } from '../../../../dev/localplane/managed-process.js';
import { repoRoot } from '../../../../dev/localplane/repo-root.js';
import {
  startSpiceDB,
  type SpiceDBDatastore,
  type SpiceDBServer,
} from '../../../../dev/localplane/spicedb-server.js';
import { resolveToolPaths } from '../../../../dev/localplane/tool-paths.js';
import { SpiceDBClient, type Relationship } from '../../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { readSchemaText } from '../../../../src/spicedb/schema.js';
import type { ResyncReport } from '../../../../src/controller/drift-resync.js';
import { POLL_TIMEOUT_MS, until } from '../../../../dev/wait/until.js';
import {
  EVENT_RESOURCE,
  isConflict,
  isNotFound,
  KubeClient,
  NAMESPACE_RESOURCE,
} from '../../../../src/kube/index.js';
import { TestObjects } from '../../support/objects.js';
import { controlPlane, testKubeConfig, uniqueId } from '../../support/cluster.js';
import { testDatabase } from '../../support/database.js';

// Controllers under test run in this process against the shared kube-apiserver (or a control plane of their
// own), but always against a SpiceDB of their own: the resync deletes every grant tuple no CR it sees accounts for,
// which on the shared SpiceDB would be other test files' tuples. Each test file also scopes its controller to
// its own objects with a label selector, so that controllers of different files never reconcile one grant.

export const SCOPE_LABEL = 'test.policygrant.dev/scope';

export interface OwnSpiceDB {
  server: SpiceDBServer;
  client: SpiceDBClient;
  /** Stops and starts it on the same port, key and datastore: memory comes back empty, PostgreSQL does not. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function spicedbBinary(): Promise<string> {
  return controlPlane().tools.spicedb ?? (await resolveToolPaths()).spicedb;
}

/** A folder for the test's logs (and its processes' state); kept after the run for a look after a failure. */
export function makeStateDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `${prefix}-`));
}

/**
 * A datastore of the run's engine (the project's global setup chooses): memory, or a fresh database of the
 * shared PostgreSQL server.
 */
export async function ownDatastore(): Promise<SpiceDBDatastore> {
  if (controlPlane().spicedbDatastore !== 'postgres') return { engine: 'memory' };
  return { engine: 'postgres', url: (await testDatabase('spicedb')).url };
}

/** A SpiceDB of the test's own, on a datastore of its own, with the project's schema written. */
export async function startOwnSpiceDB(
  stateDir: string,
  name: string,
  datastore?: SpiceDBDatastore,
): Promise<OwnSpiceDB> {
  const binary = await spicedbBinary();
  const options = { binary, stateDir, name, datastore: datastore ?? (await ownDatastore()) };
  let server = await startSpiceDB(options);
  const client = new SpiceDBClient({
    endpoint: server.endpoint,
    token: server.token,
    transport: 'plaintext',
  });
  await client.ensureSchema(readSchemaText());
  const port = Number(server.endpoint.split(':')[1]);
  return {
    get server() {
      return server;
    },
    client,
    async restart() {
      await server.process.stop();
      server = await startSpiceDB({ ...options, port, token: server.token });
    },
    async stop() {
      client.close();
      await server.process.stop();
    },
  };
}

export interface TestControllerOptions {
  kubeconfigPath?: string;
  spicedb: { endpoint: string; token: string };
  aclNamespace: string;
  scope: string;
  logFile: string;
  env?: ControllerEnvironment;
}

/** Short periods so that tests take seconds: resync 3 s, SpiceDB probe 500 ms, lease 4 s. */
export function testControllerEnv(options: TestControllerOptions): Record<string, string> {
  return {
    KUBECONFIG: options.kubeconfigPath ?? controlPlane().kubeconfigPath,
    SPICEDB_ENDPOINT: options.spicedb.endpoint,
    SPICEDB_TOKEN: options.spicedb.token,
    SPICEDB_TLS: 'plaintext',
    SPICEDB_PROBE_PERIOD: '500ms',
    ACL_NAMESPACE: options.aclNamespace,
    CONTROLLER_HOST: '127.0.0.1',
    CONTROLLER_PORT: '0',
    RESYNC_PERIOD: '3s',
    LEADER_ELECTION_NAMESPACE: options.aclNamespace,
    LEADER_ELECTION_ID: `controller-${options.scope}`,
    LEASE_DURATION: '4s',
    RENEW_DEADLINE: '3s',
    RETRY_PERIOD: '500ms',
    WATCH_LABEL_SELECTOR: `${SCOPE_LABEL}=${options.scope}`,
    LOG_LEVEL: 'debug',
    ...options.env,
  };
}

/** Runs the controller in this process via startController, logging to `logFile`. */
export async function startTestController(options: TestControllerOptions): Promise<RunningController> {
  const env = testControllerEnv(options);
  const config = controllerConfigFromEnvironment(env);
  const logger = createLogger({
    level: config.logLevel,
    name: 'controller',
    destination: pino.destination({ dest: options.logFile, sync: true }),
  });
  return startController(config, { logger });
}

export interface ControllerProcess {
  process: ManagedProcess;
  /** Base URL of its operational endpoints. */
  url: string;
}

/**
 * The controller as a process of its own (the real entrypoint, src/cmd/controller.ts, through tsx), so that a
 * test can kill or freeze it; resolves once its readiness says it leads.
 */
export async function startLeadingControllerProcess(
  name: string,
  options: TestControllerOptions,
): Promise<ControllerProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startProcess({
    name,
    command: process.execPath,
    args: ['--import', 'tsx', join(repoRoot(), 'src/cmd/controller.ts')],
    logFile: options.logFile,
    env: { ...process.env, ...testControllerEnv(options), CONTROLLER_PORT: String(port) },
  });
  let answer = 'no answer yet';
  const readyAndLeading = async () => {
    const response = await fetch(`${url}/healthz/ready`).catch((error: Error) => error);
    if (response instanceof Error) {
      answer = response.message;
      return false;
    }
    const { leader } = (await response.json()) as { leader?: boolean };
    answer = `${response.status}, leader ${leader}`;
    return response.status === 200 && leader === true;
  };
  await until(readyAndLeading, () => new Error(`${name} did not lead: ${answer}`), POLL_TIMEOUT_MS, 200);
  return { process: child, url };
}

export async function waitUntilLeading(
  controller: RunningController,
  timeout = POLL_TIMEOUT_MS,
): Promise<void> {
  // Not only the lease: the term's fence and relist too, or SpiceDB faults injected next stall its start.
  await until(() => controller.actsAsLeader(), 'the controller to act as leader', timeout, 100);
}

/**
 * Waits for a resync that starts after this call and returns its report: the first report to come may be that
 * of a run already under way, which can have read the custom resources before the caller changed them.
 */
export async function freshResync(controller: RunningController): Promise<ResyncReport> {
  for (let completed = 0; completed < 2; completed++) {
    const previous = controller.lastResync();
    await until(() => controller.lastResync() !== previous, 'the next resync to complete');
  }
  return controller.lastResync() as ResyncReport;
}

/**
 * The sum of the controller's metric samples named `sample` (a counter, a gauge, a histogram's `_count`) whose
 * labels include `labels`; 0 when there is none.
 */
export async function metricValue(
  controller: RunningController,
  sample: string,
  labels: Record<string, string> = {},
): Promise<number> {
  let sum = 0;
  for (const metric of await controller.metricsRegistry.getMetricsAsJSON()) {
    for (const value of metric.values) {
      const name = (value as { metricName?: string }).metricName ?? metric.name;
      const matches = Object.entries(labels).every(([label, expected]) => value.labels[label] === expected);
      if (name === sample && matches) sum += value.value;
    }
  }
  return sum;
}

/** One test file's fixture: its own SpiceDB, a scope on the shared kube-apiserver, a leading controller. */
export interface ControllerFixture {
  stateDir: string;
  spicedb: OwnSpiceDB;
  controller: RunningController;
  resources: Resources;
  aclNamespace: string;
}

/** Registers the hooks that build the file's fixture before its tests and tear it down after them. */
export function useControllerFixture(name: string, env?: ControllerEnvironment): ControllerFixture {
  const fixture = {} as ControllerFixture;
  beforeAll(async () => {
    fixture.stateDir = await makeStateDir(`controller-${name}`);
    fixture.spicedb = await startOwnSpiceDB(fixture.stateDir, `spicedb-${name}`);
    const scope = uniqueId(name);
    fixture.resources = new Resources(testKubeConfig(), scope);
    fixture.aclNamespace = await fixture.resources.namespace('acl');
    fixture.controller = await startTestController({
      spicedb: fixture.spicedb.server,
      aclNamespace: fixture.aclNamespace,
      scope,
      logFile: `${fixture.stateDir}/controller.log`,
      ...(env ? { env } : {}),
    });
    await waitUntilLeading(fixture.controller);
  });
  afterAll(async () => {
    await fixture.controller?.stop();
    await fixture.spicedb?.stop();
    await fixture.resources?.cleanUp();
  });
  return fixture;
}

/** What a test created: the object's name and the spec it was created with. */
export interface Created<S> {
  name: string;
  spec: S;
}

/** The custom resources of one test file, in its scope. */
export class Resources {
  private readonly objects: TestObjects;
  private readonly itemNames: string[] = [];

  constructor(
    kubeConfig: KubeConfig,
    readonly scope: string,
  ) {
    this.objects = new TestObjects(new KubeClient(kubeConfig));
  }

  private get labels(): Record<string, string> {
    return { [SCOPE_LABEL]: this.scope };
  }

  async namespace(prefix: string, labels: Record<string, string> = {}): Promise<string> {
    const name = uniqueId(prefix);
    await this.objects.create(NAMESPACE_RESOURCE, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels },
    });
    return name;
  }

  async labelNamespace(name: string, labels: Record<string, string | null>): Promise<void> {
    const namespace = await this.objects.get<KubernetesObject>(NAMESPACE_RESOURCE, name);
    const current = Object.fromEntries(
      Object.entries({ ...namespace.metadata?.labels, ...labels }).filter(
        (entry): entry is [string, string] => entry[1] !== null,
      ),
    );
    await this.objects.replace(NAMESPACE_RESOURCE, name, {
      ...namespace,
      metadata: { ...namespace.metadata, labels: current },
    });
  }

  async createItem(spec: Partial<CatalogItemSpec> = {}): Promise<Created<CatalogItemSpec>> {
    const name = uniqueId('item');
    const body = {
      apiVersion: GROUP_VERSION,
      kind: CATALOG_ITEM_KIND,
      metadata: { name, labels: this.labels },
      spec: {
        itemId: `urn:dx:item:${randomUUID()}`,
        itemType: 'DATABANK',
        ownerId: randomUUID(),
        organisationId: randomUUID(),
        accessTypes: ['api', 'file', 'sub'],
        ...spec,
      },
    };
    await this.objects.create(CATALOG_ITEM_RESOURCE, body);
    this.itemNames.push(name);
    return { name, spec: body.spec };
  }

  async updateItemSpec(name: string, change: Partial<CatalogItemSpec>): Promise<CatalogItem> {
    const item = await this.objects.get<CatalogItem>(CATALOG_ITEM_RESOURCE, name);
    return this.objects.replace<CatalogItem>(CATALOG_ITEM_RESOURCE, name, {
      ...item,
      spec: { ...item.spec, ...change },
    });
  }

  async deleteItem(name: string): Promise<void> {
    await this.objects.delete(CATALOG_ITEM_RESOURCE, name);
  }

  async createGrant<S extends PolicyGrantSpec>(
    namespace: string,
    spec: S,
    name = uniqueId('grant'),
    annotations?: Record<string, string>,
  ): Promise<Created<S>> {
    const body = {
      apiVersion: GROUP_VERSION,
      kind: POLICY_GRANT_KIND,
      metadata: { name, labels: this.labels, ...(annotations && { annotations }) },
      spec,
    };
    await this.objects.create(POLICY_GRANT_RESOURCE, body, namespace);
    return { name, spec };
  }

  async getGrant(namespace: string, name: string): Promise<PolicyGrant> {
    return this.objects.get<PolicyGrant>(POLICY_GRANT_RESOURCE, name, namespace);
  }

  async updateGrantSpec(
    namespace: string,
    name: string,
    change: (spec: PolicyGrantSpec) => PolicyGrantSpec,
  ): Promise<PolicyGrant> {
    for (;;) {
      const grant = await this.getGrant(namespace, name);
      try {
        const body = { ...grant, spec: change(grant.spec) };
        return await this.objects.replace<PolicyGrant>(POLICY_GRANT_RESOURCE, name, body, namespace);
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
  }

  revoke(namespace: string, name: string): Promise<PolicyGrant> {
    return this.updateGrantSpec(namespace, name, (spec) => ({
      ...spec,
      revokedAt: new Date().toISOString(),
      revokedBy: randomUUID(),
    }));
  }

  async deleteGrant(namespace: string, name: string): Promise<void> {
    await this.objects.delete(POLICY_GRANT_RESOURCE, name, namespace);
  }

  async grantExists(namespace: string, name: string): Promise<boolean> {
    return exists(this.getGrant(namespace, name));
  }

  /** Polls the grant until its Enforced condition has `reason` for its current generation. */
  async waitForReason(
    namespace: string,
    name: string,
    reason: string,
    timeout = POLL_TIMEOUT_MS,
  ): Promise<PolicyGrant> {
    return untilReason(`${namespace}/${name}`, () => this.getGrant(namespace, name), reason, timeout);
  }

  async listEvents(
    namespace: string,
  ): Promise<{ reason?: string; note?: string; regarding?: { name?: string } }[]> {
    return this.objects.list(EVENT_RESOURCE, namespace);
  }

  /** Creates the Membership under its deterministic name; memberships are scoped by namespace, not label. */
  async createMembership(namespace: string, spec: MembershipSpec): Promise<Created<MembershipSpec>> {
    const name = membershipName(spec);
    const body = { apiVersion: GROUP_VERSION, kind: MEMBERSHIP_KIND, metadata: { name }, spec };
    await this.objects.create(MEMBERSHIP_RESOURCE, body, namespace);
    return { name, spec };
  }

  async getMembership(namespace: string, name: string): Promise<Membership> {
    return this.objects.get<Membership>(MEMBERSHIP_RESOURCE, name, namespace);
  }

  /** Sets spec.removedAt, as a removal event or snapshot does. */
  async removeMembership(namespace: string, name: string): Promise<Membership> {
    const current = await this.getMembership(namespace, name);
    const body = { ...current, spec: { ...current.spec, removedAt: new Date().toISOString() } };
    return this.objects.replace<Membership>(MEMBERSHIP_RESOURCE, name, body, namespace);
  }

  async deleteMembership(namespace: string, name: string): Promise<void> {
    await this.objects.delete(MEMBERSHIP_RESOURCE, name, namespace);
  }

  async membershipExists(namespace: string, name: string): Promise<boolean> {
    return exists(this.getMembership(namespace, name));
  }

  /** Polls the Membership until its Enforced condition has `reason` for its current generation. */
  async waitForMembershipReason(namespace: string, name: string, reason: string): Promise<Membership> {
    return untilReason(`${namespace}/${name}`, () => this.getMembership(namespace, name), reason);
  }

  /** Makes the user a member of the organisation through a Membership, once the controller has written it. */
  async addMember(namespace: string, organisationId: string, userId: string): Promise<Membership> {
    const { name } = await this.createMembership(namespace, { organisationId, userId });
    return this.waitForMembershipReason(namespace, name, 'Projected');
  }

  /** CatalogItems are cluster-scoped: no namespace takes them away. */
  async cleanUp(): Promise<void> {
    await Promise.allSettled(this.itemNames.map((name) => this.deleteItem(name)));
  }
}

/** Whether the read found the object: a 404 is false, other errors throw. */
export function exists(read: Promise<unknown>): Promise<boolean> {
  return read.then(
    () => true,
    (error: unknown) => {
      if (isNotFound(error)) return false;
      throw error;
    },
  );
}

interface WithConditions {
  metadata: { generation?: number };
  status?: { conditions?: Condition[] };
}

export function enforcedCondition(object: Pick<WithConditions, 'status'>): Condition | undefined {
  return findStatusCondition(object.status?.conditions ?? [], ENFORCED_CONDITION);
}

/** Polls `read` until the object's Enforced condition has `reason` for its current generation. */
export async function untilReason<T extends WithConditions>(
  what: string,
  read: () => Promise<T>,
  reason: string,
  timeout = POLL_TIMEOUT_MS,
  pollMs = 100,
): Promise<T> {
  let object: T | undefined;
  const hasReason = async () => {
    object = await read();
    const condition = enforcedCondition(object);
    return condition?.reason === reason && condition.observedGeneration === object.metadata.generation;
  };
  const otherReason = () =>
    new Error(
      `${what}: Enforced is ${JSON.stringify(object && enforcedCondition(object))}, waiting for ${reason}`,
    );
  await until(hasReason, otherReason, timeout, pollMs);
  return object as T;
}

export type IndividualSpec = PolicyGrantSpec & { userId: string };

export function individual(
  itemId: string,
  accessTypes: string[] = ['api'],
  extra: Partial<PolicyGrantSpec> = {},
): IndividualSpec {
  return {
    policyType: 'INDIVIDUAL',
    userId: randomUUID(),
    itemId,
    itemType: 'DATABANK',
    expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
    constraints: { access: accessTypes.map((accessType) => ({ accessType })) },
    ...extra,
  };
}

export function group(
  itemId: string,
  allowedOrgIds: string[],
  accessTypes: string[] = ['api'],
): PolicyGrantSpec {
  return {
    policyType: 'GROUP',
    itemId,
    itemType: 'DATABANK',
    expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
    constraints: { access: accessTypes.map((accessType) => ({ accessType })), subjects: { allowedOrgIds } },
  };
}

/**
 * Whether `userId` has `permission` on the item: at least as fresh as the ZedToken in the status of `at`
 * (what a client of the ACL API gets), else fully consistent.
 */
export async function userCan(
  client: SpiceDBClient,
  itemId: string,
  permission: string,
  userId: string,
  at?: { status?: { zedToken?: string } },
): Promise<boolean> {
  const zedToken = at?.status?.zedToken;
  const { allowed } = await client.checkPermission({
    resource: { type: 'resource', id: encodeObjectId(itemId) },
    permission,
    subject: { type: 'user', id: encodeObjectId(userId) },
    consistency: zedToken ? { atLeastAsFresh: zedToken } : { fullyConsistent: true },
  });
  return allowed;
}

/** Every relationship on the item's resource object. */
export async function relationshipsOn(client: SpiceDBClient, itemId: string): Promise<Relationship[]> {
  const found: Relationship[] = [];
  for await (const page of client.readRelationships({
    resourceType: 'resource',
    resourceId: encodeObjectId(itemId),
  })) {
    found.push(...page.relationships);
  }
  return found;
}
