// npm run bench:controller [-- --enforce 1000 --api-total 10000 --list 10000,100000 --concurrency 16
//                              --workers 4,16 --heap-mb 384 --runtime compiled --finalizer]
//
// The grant controller against a control plane of its own (etcd, kube-apiserver, SpiceDB with the memory
// datastore, all on loopback), in three parts:
// 1. time to enforce: grants created through the Kubernetes API, from the create request until the grant's
//    watch shows Enforced=True, with the controller running as its own process (the real entrypoint); once per
//    --workers value (MAX_CONCURRENT_RECONCILES; the controller's default when absent), each round with a
//    controller started afresh and grants of its own; with --finalizer the grants carry the controller's
//    finalizer from creation, as the ACL API creates them (without: as kubectl applies them);
// 2. the same controller with --api-total grants: duration of one full resync (from its own metrics) and its
//    peak RSS (VmHWM);
// 3. for each --list size: the resync alone, in a process of its own whose caches are fed from a list of
//    grants cloned from a real one (creating 100,000 CRs through one kube-apiserver on two cores takes too
//    long for a benchmark), against SpiceDB holding the same relationships; the baseline is SpiceDB importing
//    those relationships itself (WriteRelationships, 1,000 per call).
// The controller and the resync process run compiled JavaScript under plain node, as the image does
// (--runtime tsx: through tsx), with the chart's heap bound for the controller (--heap-mb; 0: Node's default).
// Stops itself: every wait is bounded, and everything it started is stopped at the end.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { load } from 'js-yaml';
import pLimit from 'p-limit';
import {
  CATALOG_ITEM_KIND,
  CATALOG_ITEM_RESOURCE,
  ENFORCED_CONDITION,
  findStatusCondition,
  GROUP_VERSION,
  POLICY_GRANT_KIND,
  POLICY_GRANT_RESOURCE,
  RELATIONSHIPS_FINALIZER,
  type CatalogItem,
  type Membership,
  type PolicyGrant,
} from '../src/api/v1alpha1/index.js';
import { ClusterView } from '../src/controller/cluster-view.js';
import { GrantMetrics } from '../src/controller/controller-metrics.js';
import { DriftResync } from '../src/controller/drift-resync.js';
import { itemOwners } from '../src/controller/catalog-items/item-owners.js';
import { grantCacheTransform } from '../src/controller/grants/cached-grant.js';
import { GrantKind } from '../src/controller/grants/grant-kind.js';
import { KeyedMutex } from '../src/controller/keyed-mutex.js';
import { managedRelations } from '../src/controller/managed-relations.js';
import { membershipCacheTransform } from '../src/controller/memberships/cached-membership.js';
import { ProjectedView } from '../src/controller/projected/projected-view.js';
import { membershipKind } from '../src/controller/memberships/membership-projection.js';
import { projectGrant, projectOwners } from '../src/verdict/projection.js';
import { startLocalControlPlane, type LocalControlPlane } from '../dev/localplane/control-plane.js';
import { freePort } from '../dev/localplane/free-port.js';
import { startProcess, type ManagedProcess } from '../dev/localplane/managed-process.js';
import { repoRoot } from '../dev/localplane/repo-root.js';
import { createMetricsRegistry } from '../src/observability/metrics.js';
import { Informer, InternPool } from '../src/runtime/index.js';
import {
  collectionPath,
  KubeClient,
  kubeListWatch,
  NAMESPACE_RESOURCE,
  objectPath,
} from '../src/kube/index.js';
import { silentLogger } from '../src/runtime/logger.js';
import { readSchemaText } from '../src/spicedb/schema.js';
import { SpiceDBClient, type RelationshipUpdate } from '../src/spicedb/client.js';
import { loadRegistry } from '../src/spicedb/registry.js';
import { printTable } from './support/markdown-table.js';
import { until } from '../dev/wait/until.js';
import { entrypointArgs, parseNodeRuntime, type NodeRuntime } from './support/node-runtime.js';
import { staticInformer } from './support/static-informer.js';
import { percentile } from './support/statistics.js';

const ACL_NAMESPACE = 'policy-grant-system';
const BENCH_LABEL = 'bench.policygrant.dev/run';
const CHART_VALUES = 'charts/policy-grant-operator/values.yaml';
const OVERALL_TIMEOUT_MS = 45 * 60_000;
/** Grants created one after the other, each once the previous one is enforced. */
const SINGLE_GRANTS = 50;
/** Grant numbers (and users) of part 1's later rounds start at round × this. */
const ROUND_OFFSET = 10_000_000;

interface ChildInput {
  count: number;
  template: PolicyGrant;
  item: CatalogItem;
  spicedb: { endpoint: string; token: string };
}

interface ChildOutput {
  /** Reading every managed relation, nothing else: the floor under a resync. */
  readMs: number;
  inSyncMs: number;
  inSyncExamined: number;
  fromEmptyMs: number;
  fromEmptyWritten: number;
  /** Peak RSS up to the end of the in-sync resync, and up to the end (the resync from an empty SpiceDB). */
  inSyncPeakRssBytes: number;
  peakRssBytes: number;
  /** Heap in use after a full GC, caches and indexes still alive: what the grants really cost. */
  liveHeapBytes: number;
}

// ---------------------------------------------------------------------------------------------------------
// Shared

/** A deterministic user per grant number, so that the baseline import and the clones name the same tuples. */
function userOf(index: number): string {
  return `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`;
}

/** A deep copy, as an informer holds each object parsed on its own. */
function cloneGrant(template: PolicyGrant, index: number): PolicyGrant {
  const grant = structuredClone(template);
  grant.metadata = {
    ...grant.metadata,
    name: `bench-${index}`,
    uid: randomUUID(),
    resourceVersion: String(index + 1),
  };
  grant.spec.userId = userOf(index);
  return grant;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

// ---------------------------------------------------------------------------------------------------------
// Child: the resync alone, caches fed from a list

async function resyncChild(input: ChildInput): Promise<ChildOutput> {
  const registry = loadRegistry();
  const pool = new InternPool();
  const grants = await staticInformer<PolicyGrant>(
    input.count,
    (i) => cloneGrant(input.template, i),
    grantCacheTransform(pool),
  );
  const items = await staticInformer(1, () => input.item);
  const namespaces = await staticInformer<KubernetesObject>(0, () => ({}));
  const cluster = new ClusterView({ grants, items, namespaces, registry, aclNamespace: ACL_NAMESPACE });
  const metrics = new GrantMetrics(createMetricsRegistry(), () => []);
  const client = new SpiceDBClient({ ...input.spicedb, transport: 'plaintext' });
  const resync = new DriftResync({
    // Unfenced: this process measures the resync alone, with no leader election.
    store: {
      readRelationships: (filter, options) => client.readRelationships(filter, options),
      writeRelationshipsInBatches: (updates) => client.writeRelationshipsInBatches(updates),
      ensureSchema: () => client.ensureSchema(readSchemaText()),
    },
    kinds: [
      new GrantKind({ cluster, events: { record: async () => undefined }, metrics, logger: silentLogger }),
      itemOwners(cluster),
      new ProjectedView(
        await staticInformer<Membership>(0, () => ({}) as Membership, membershipCacheTransform(pool)),
        membershipKind,
      ),
    ],
    mutex: new KeyedMutex(),
    metrics,
    logger: silentLogger,
    onTuplesDeleted: () => undefined,
  });
  const readStarted = performance.now();
  for (const { objectType, relation } of managedRelations(registry)) {
    for await (const page of client.readRelationships({ resourceType: objectType, relation })) void page;
  }
  const readMs = performance.now() - readStarted;
  const inSync = await resync.run();
  const inSyncPeakRssBytes = process.resourceUsage().maxRSS * 1024;
  await client.deleteRelationships({ resourceType: 'resource', relation: 'api_consumer' });
  const fromEmpty = await resync.run();
  (globalThis as { gc?: () => void }).gc?.();
  const liveHeapBytes = process.memoryUsage().heapUsed;
  client.close();
  await Promise.all([grants.stop(), items.stop(), namespaces.stop()]);
  return {
    readMs,
    inSyncMs: inSync.durationMs,
    inSyncExamined: inSync.examined,
    fromEmptyMs: fromEmpty.durationMs,
    fromEmptyWritten: fromEmpty.missing,
    inSyncPeakRssBytes,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    liveHeapBytes,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Parent

interface Options {
  enforce: number;
  apiTotal: number;
  list: number[];
  concurrency: number;
  /** MAX_CONCURRENT_RECONCILES per round of part 1; undefined: the controller's default. */
  workers: (number | undefined)[];
  /** The controller's and the resync process's V8 heap bound (--max-old-space-size), in MB; 0: none. */
  heapMb: number;
  runtime: NodeRuntime;
  /** Grants created with the controller's finalizer, as the ACL API creates them. */
  finalizer: boolean;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      enforce: { type: 'string', default: '1000' },
      'api-total': { type: 'string', default: '10000' },
      list: { type: 'string', default: '10000,100000' },
      concurrency: { type: 'string', default: '16' },
      workers: { type: 'string', default: '' },
      'heap-mb': { type: 'string', default: String(chartControllerHeapMb()) },
      runtime: { type: 'string', default: 'compiled' },
      finalizer: { type: 'boolean', default: false },
    },
  });
  const workers = String(values.workers).split(',').filter(Boolean).map(Number);
  return {
    enforce: Number(values.enforce),
    apiTotal: Number(values['api-total']),
    list: String(values.list).split(',').filter(Boolean).map(Number),
    concurrency: Number(values.concurrency),
    workers: workers.length > 0 ? workers : [undefined],
    heapMb: Number(values['heap-mb']),
    runtime: parseNodeRuntime(String(values.runtime)),
    finalizer: values.finalizer,
  };
}

/** The heap bound the Helm chart gives the controller by default. */
function chartControllerHeapMb(): number {
  const values = load(readFileSync(join(repoRoot(), CHART_VALUES), 'utf8')) as {
    controller: { maxHeapMegabytes: number };
  };
  return values.controller.maxHeapMegabytes;
}

function heapBound(heapMb: number): string {
  return heapMb > 0 ? `${heapMb} MB` : 'Node’s default';
}

function heapBoundArgs(heapMb: number): string[] {
  return heapMb > 0 ? [`--max-old-space-size=${heapMb}`] : [];
}

/** Peak and current resident set size of a process, from /proc (Linux). */
function memoryOf(pid: number): { peak: number; current: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { peak: field('VmHWM'), current: field('VmRSS') };
}

class Bench {
  readonly run = randomUUID().slice(0, 8);
  readonly enforcedAt = new Map<string, number>();
  readonly createdAt = new Map<string, number>();
  private controller?: { process: ManagedProcess; url: string };
  private watcher?: Informer<PolicyGrant>;

  constructor(
    private readonly plane: LocalControlPlane,
    private readonly opts: Options,
  ) {}

  private kubeClient?: KubeClient;

  private get kube(): KubeClient {
    this.kubeClient ??= new KubeClient(this.plane.kubeConfig());
    return this.kubeClient;
  }

  get spicedb() {
    const server = this.plane.spicedb;
    if (!server) throw new Error('the control plane has no SpiceDB');
    return { endpoint: server.endpoint, token: server.token };
  }

  async setUp(): Promise<CatalogItem> {
    await this.kube.call({
      method: 'POST',
      path: collectionPath(NAMESPACE_RESOURCE),
      body: { metadata: { name: ACL_NAMESPACE } },
    });
    const item = await this.kube.call<CatalogItem>({
      method: 'POST',
      path: collectionPath(CATALOG_ITEM_RESOURCE),
      body: {
        apiVersion: GROUP_VERSION,
        kind: CATALOG_ITEM_KIND,
        metadata: { name: 'bench-item', labels: { [BENCH_LABEL]: this.run } },
        spec: {
          itemId: `urn:dx:item:bench-${this.run}`,
          itemType: 'DATABANK',
          ownerId: randomUUID(),
          organisationId: randomUUID(),
          accessTypes: ['api', 'file', 'sub'],
        },
      },
    });
    this.watcher = new Informer<PolicyGrant>({
      source: kubeListWatch(this.kube, collectionPath(POLICY_GRANT_RESOURCE, ACL_NAMESPACE)),
      labelSelector: `${BENCH_LABEL}=${this.run}`,
    });
    const onChange = (grant: PolicyGrant) => {
      const name = grant.metadata.name ?? '';
      const enforced =
        findStatusCondition(grant.status?.conditions ?? [], ENFORCED_CONDITION)?.status === 'True';
      if (enforced && !this.enforcedAt.has(name)) this.enforcedAt.set(name, performance.now());
    };
    this.watcher.addEventHandler({ onAdd: onChange, onUpdate: (_old, grant) => onChange(grant) });
    this.watcher.start();
    await this.watcher.waitForSync();
    return item;
  }

  async startController(workers: number | undefined): Promise<number> {
    await this.controller?.process.stop(15_000);
    const port = await freePort();
    const env = {
      ...process.env,
      KUBECONFIG: this.plane.kubeconfigPath,
      SPICEDB_ENDPOINT: this.spicedb.endpoint,
      SPICEDB_TOKEN: this.spicedb.token,
      SPICEDB_TLS: 'plaintext',
      ACL_NAMESPACE,
      CONTROLLER_HOST: '127.0.0.1',
      CONTROLLER_PORT: String(port),
      RESYNC_PERIOD: '20s',
      LOG_LEVEL: 'warn',
      ...(workers === undefined ? {} : { MAX_CONCURRENT_RECONCILES: String(workers) }),
    };
    const child = startProcess({
      name: 'controller',
      command: process.execPath,
      args: [
        ...heapBoundArgs(this.opts.heapMb),
        ...(await entrypointArgs(this.opts.runtime, join(repoRoot(), 'src/cmd/controller.ts'))),
      ],
      logFile: join(this.plane.stateDir, 'controller.log'),
      env,
    });
    this.controller = { process: child, url: `http://127.0.0.1:${port}` };
    await until(() => this.readyAndLeading(), 'the controller to lead', 120_000, 100);
    return memoryOf(child.pid).current;
  }

  private async readyAndLeading(): Promise<boolean> {
    try {
      const response = await fetch(`${this.controller?.url}/healthz/ready`);
      return response.ok && ((await response.json()) as { leader?: boolean }).leader === true;
    } catch {
      return false;
    }
  }

  async createGrants(from: number, to: number, itemId: string): Promise<number> {
    const started = performance.now();
    await pLimit(this.opts.concurrency).map([...Array(to - from).keys()], async (offset) => {
      const name = `grant-${from + offset}`;
      this.createdAt.set(name, performance.now());
      await this.kube.call({
        method: 'POST',
        path: collectionPath(POLICY_GRANT_RESOURCE, ACL_NAMESPACE),
        body: {
          apiVersion: GROUP_VERSION,
          kind: POLICY_GRANT_KIND,
          metadata: {
            name,
            labels: { [BENCH_LABEL]: this.run },
            ...(this.opts.finalizer ? { finalizers: [RELATIONSHIPS_FINALIZER] } : {}),
          },
          spec: {
            policyType: 'INDIVIDUAL',
            userId: userOf(from + offset),
            itemId,
            itemType: 'DATABANK',
            expiryTime: '2099-01-01T00:00:00Z',
            constraints: { access: [{ accessType: 'api' }] },
          },
        },
      });
    });
    return performance.now() - started;
  }

  /** Whether every grant created (since the last clear) has been seen enforced. */
  allEnforced(): boolean {
    return [...this.createdAt.keys()].every((name) => this.enforcedAt.has(name));
  }

  latencies(): number[] {
    return [...this.createdAt]
      .map(([name, created]) => (this.enforcedAt.get(name) ?? NaN) - created)
      .sort((a, b) => a - b);
  }

  async metric(name: string): Promise<number> {
    const text = await (await fetch(`${this.controller?.url}/metrics`)).text();
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  }

  /** Keys waiting in the PolicyGrant work queue (all priorities); 0 before anything was queued. */
  async grantQueueDepth(): Promise<number> {
    const text = await (await fetch(`${this.controller?.url}/metrics`)).text();
    const samples = text.matchAll(/^workqueue_depth\{[^}]*\bname="policygrant"[^}]*\} (\S+)$/gm);
    return [...samples].reduce((sum, [, value]) => sum + Number(value), 0);
  }

  /** The duration of a resync that started after this call. */
  async nextResyncMs(): Promise<number> {
    const count = () => this.metric('policygrant_resync_duration_seconds_count');
    const start = await count();
    await until(async () => (await count()) >= start + 1, 'a resync to finish', 300_000, 100);
    const [sumBefore, countBefore] = [
      await this.metric('policygrant_resync_duration_seconds_sum'),
      await count(),
    ];
    await until(async () => (await count()) >= countBefore + 1, 'another resync to finish', 300_000, 100);
    return ((await this.metric('policygrant_resync_duration_seconds_sum')) - sumBefore) * 1000;
  }

  controllerMemory(): { peak: number; current: number } {
    if (!this.controller) throw new Error('no controller');
    return memoryOf(this.controller.process.pid);
  }

  async template(): Promise<PolicyGrant> {
    return this.kube.call<PolicyGrant>({
      method: 'GET',
      path: objectPath(POLICY_GRANT_RESOURCE, { namespace: ACL_NAMESPACE, name: 'grant-0' }),
    });
  }

  async stop(): Promise<void> {
    await this.controller?.process.stop(15_000);
    await this.watcher?.stop();
  }
}

/** Writes the tuples of `count` cloned grants (and the item's owners) the way SpiceDB imports fastest here. */
async function importBaseline(
  client: SpiceDBClient,
  template: PolicyGrant,
  item: CatalogItem,
  count: number,
) {
  const registry = loadRegistry();
  await client.deleteRelationships({ resourceType: 'resource', relation: 'api_consumer' });
  const updates: RelationshipUpdate[] = projectOwners(item.spec, registry).map((relationship) => ({
    operation: 'touch',
    relationship,
  }));
  for (let i = 0; i < count; i++) {
    for (const relationship of projectGrant(cloneGrant(template, i).spec, registry).relationships) {
      updates.push({ operation: 'touch', relationship });
    }
  }
  const started = performance.now();
  await client.writeRelationshipsInBatches(updates);
  return performance.now() - started;
}

async function runChild(input: ChildInput, stateDir: string, opts: Options): Promise<ChildOutput> {
  const inputFile = join(stateDir, `resync-child-${input.count}.json`);
  const outputFile = join(stateDir, `resync-child-${input.count}.out.json`);
  await writeFile(inputFile, JSON.stringify(input));
  const child = startProcess({
    name: `resync-${input.count}`,
    command: process.execPath,
    args: [
      ...heapBoundArgs(opts.heapMb),
      '--expose-gc',
      ...(await entrypointArgs(opts.runtime, join(repoRoot(), 'bench/controller.ts'))),
      '--child',
      inputFile,
      outputFile,
    ],
    logFile: join(stateDir, `resync-child-${input.count}.log`),
  });
  const code = await child.exited;
  if (code !== 0) throw new Error(`resync child exited with ${code}; see ${child.logFile}`);
  return JSON.parse(readFileSync(outputFile, 'utf8')) as ChildOutput;
}

async function main(): Promise<void> {
  const opts = options();
  const stateDir = await mkdtemp(join(tmpdir(), 'bench-controller-'));
  const timer = setTimeout(() => {
    console.error(`benchmark exceeded ${OVERALL_TIMEOUT_MS / 60_000} min; stopping`);
    process.exit(1);
  }, OVERALL_TIMEOUT_MS);
  console.log('starting etcd, kube-apiserver and SpiceDB (loopback) …');
  const plane = await startLocalControlPlane({ stateDir });
  const bench = new Bench(plane, opts);
  const rows: string[][] = [];
  try {
    const item = await bench.setUp();
    // 1. Time to enforce, per worker count: one grant at a time (the pipeline alone), then a burst (pipeline
    // plus queueing). Later rounds take grant numbers (and users) far above the first round's.
    for (const [round, workers] of opts.workers.entries()) {
      const idleRss = await bench.startController(workers);
      // A controller started after a round first reconciles that round's grants (nothing to write).
      await until(
        async () => (await bench.grantQueueDepth()) === 0,
        'the grant queue to drain',
        300_000,
        100,
      );
      console.log(`controller leads (${workers ?? 'default'} workers); RSS ${mb(idleRss)}`);
      rows.push(...(await timeToEnforce(bench, opts, item.spec.itemId, round, workers)));
    }

    // 2. The real controller with apiTotal grants.
    if (opts.apiTotal > opts.enforce) {
      const more = performance.now();
      await bench.createGrants(opts.enforce, opts.apiTotal, item.spec.itemId);
      await until(() => bench.allEnforced(), `${opts.apiTotal} grants enforced`, 1_800_000, 100);
      const allMs = performance.now() - more;
      console.log(`${opts.apiTotal - opts.enforce} more grants created and enforced in ${seconds(allMs)}`);
      rows.push([
        'create + enforce throughput',
        `${opts.apiTotal - opts.enforce} grants via the API`,
        `${(((opts.apiTotal - opts.enforce) / allMs) * 1000).toFixed(0)} grants/s`,
        '',
        '',
      ]);
    }
    const apiGrants = Math.max(opts.apiTotal, opts.enforce);
    const resyncMs = await bench.nextResyncMs();
    const memory = bench.controllerMemory();
    const template = await bench.template();
    const baseline = new SpiceDBClient({ ...bench.spicedb, transport: 'plaintext' });
    rows.push([
      'full resync, in sync (controller)',
      `${apiGrants} grants via the API`,
      seconds(resyncMs),
      '',
      `peak RSS ${mb(memory.peak)}`,
    ]);
    await bench.stop();

    // 3. The resync alone, caches fed from a list, against SpiceDB holding the same relationships.
    const liveHeaps: [number, number][] = [];
    for (const count of opts.list) {
      const importMs = await importBaseline(baseline, template, item, count);
      const result = await runChild({ count, template, item, spicedb: bench.spicedb }, stateDir, opts);
      const ratio = (ms: number) => `${(ms / importMs).toFixed(2)}×`;
      rows.push(['SpiceDB import (baseline)', `${count} relationships`, seconds(importMs), '1.00×', '']);
      rows.push([
        'SpiceDB read of all pages',
        `${count} relationships`,
        seconds(result.readMs),
        ratio(result.readMs),
        '',
      ]);
      rows.push([
        'full resync, in sync',
        `${count} grants from a list`,
        seconds(result.inSyncMs),
        ratio(result.inSyncMs),
        `peak RSS ${mb(result.inSyncPeakRssBytes)}, live heap ${mb(result.liveHeapBytes)}, heap bound ${heapBound(opts.heapMb)}, ${opts.runtime}`,
      ]);
      liveHeaps.push([count, result.liveHeapBytes]);
      rows.push([
        'full resync, SpiceDB empty',
        `${count} grants from a list`,
        seconds(result.fromEmptyMs),
        ratio(result.fromEmptyMs),
        `${result.fromEmptyWritten} written, peak RSS ${mb(result.peakRssBytes)}`,
      ]);
    }
    baseline.close();
    rows.push(...memoryPer10k(liveHeaps));
    printTable(['measure', 'size', 'time', 'vs import', 'notes'], rows);
  } finally {
    clearTimeout(timer);
    await bench.stop();
    await plane.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** Part 1 for one controller: grants one at a time, then a burst; numbered from `round` × ROUND_OFFSET. */
async function timeToEnforce(
  bench: Bench,
  opts: Options,
  itemId: string,
  round: number,
  workers: number | undefined,
): Promise<string[][]> {
  const base = round * ROUND_OFFSET;
  const size = (count: number) =>
    `${count} grants via the API${opts.finalizer ? ' with the finalizer' : ''}` +
    (workers === undefined ? '' : `, ${workers} workers`);
  bench.createdAt.clear();
  for (let i = 0; i < SINGLE_GRANTS; i++) {
    const index = base + Math.max(opts.apiTotal, opts.enforce) + i;
    await bench.createGrants(index, index + 1, itemId);
    await until(() => bench.allEnforced(), 'one grant enforced', 60_000, 100);
  }
  const single = bench.latencies();
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  const singleRows = [
    ['time to enforce, one at a time, p50', size(SINGLE_GRANTS), ms(percentile(single, 50)), '', ''],
    ['time to enforce, one at a time, p99', size(SINGLE_GRANTS), ms(percentile(single, 99)), '', ''],
  ];
  if (opts.enforce === 0) return singleRows;
  bench.createdAt.clear();
  const createMs = await bench.createGrants(base, base + opts.enforce, itemId);
  await until(() => bench.allEnforced(), `${opts.enforce} grants enforced`, 600_000, 100);
  const sorted = bench.latencies();
  console.log(`${opts.enforce} grants created in ${seconds(createMs)}`);
  return [
    ...singleRows,
    ['time to enforce, p50', size(opts.enforce), ms(percentile(sorted, 50)), '', ''],
    ['time to enforce, p99', size(opts.enforce), ms(percentile(sorted, 99)), '', ''],
    ['time to enforce, max', size(opts.enforce), ms(sorted.at(-1) ?? NaN), '', ''],
  ];
}

/** The live heap a further 10,000 grants cost: the slope between the smallest and the largest list. */
function memoryPer10k(liveHeaps: [number, number][]): string[][] {
  const [first, last] = [liveHeaps[0], liveHeaps.at(-1)];
  if (!first || !last || last[0] === first[0]) return [];
  const per10k = ((last[1] - first[1]) / (last[0] - first[0])) * 10_000;
  return [['live heap per 10,000 grants', `${first[0]} → ${last[0]} grants`, '', '', mb(per10k)]];
}

if (process.argv[2] === '--child') {
  const [inputFile = '', outputFile = ''] = process.argv.slice(3);
  const output = await resyncChild(JSON.parse(readFileSync(inputFile, 'utf8')) as ChildInput);
  await writeFile(outputFile, JSON.stringify(output));
  // Done: the stopped informers and the closed SpiceDB channel leave a handle open, and the parent waits for
  // this process to exit.
  process.exit(0);
} else {
  await main();
}
