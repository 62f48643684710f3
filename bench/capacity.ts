// npm run bench:capacity [-- --sizes 10000,100000 --unpaginated-max 100000]
//
// What one PolicyGrant and one Membership cost where they are kept, measured on a local etcd and kube-apiserver
// (loopback, no SpiceDB): for each size, N synthetic enforced objects of each kind (shaped as
// bench:controller-memory's grants; Memberships with the ACL API's event bookkeeping, the finalizer and the
// controller's status) are written straight into etcd, as kube-apiserver stores custom resources, and then
// - etcd's own bytes per object: etcd_mvcc_db_total_size_in_use_in_bytes before and after, over N (beside it
//   the length of the JSON stored);
// - a full LIST from kube-apiserver, paginated (limit 500, as the controller's informers list) and, up to
//   --unpaginated-max, in one response: time until the last item is parsed, and kube-apiserver's peak RSS
//   during it (its high-water mark, reset before the list);
// - the controller's cache: a child process (node --expose-gc) lists the objects through an informer with the
//   controller's transform and indexes them (ClusterView for grants, a ProjectedView for Memberships); live
//   heap after a full GC, over N.
// Sizes grow by writing the difference. 1,000,000 is not written: its rows are extrapolated linearly from the
// measured ones and labelled so.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Membership, PolicyGrant } from '../src/api/v1alpha1/index.js';
import { grantCacheTransform } from '../src/controller/grants/cached-grant.js';
import { membershipCacheTransform } from '../src/controller/memberships/cached-membership.js';
import { ProjectedView } from '../src/controller/projected/projected-view.js';
import { membershipKind } from '../src/controller/memberships/membership-projection.js';
import { startLocalControlPlane } from '../dev/localplane/control-plane.js';
import { repoRoot } from '../dev/localplane/repo-root.js';
import { InternPool } from '../src/runtime/index.js';
import {
  collectionPath,
  KubeApiError,
  KubeClient,
  kubeListWatch,
  loadKubeConfig,
  NAMESPACE_RESOURCE,
} from '../src/kube/index.js';
import { readBody } from '../src/kube/kube-client.js';
import { MEMBERSHIP_RESOURCE, POLICY_GRANT_RESOURCE } from '../src/api/v1alpha1/index.js';
import { EtcdGateway, type EtcdEntry } from './support/etcd-gateway.js';
import { indexSyntheticGrants } from './support/grant-view.js';
import { liveHeap } from './support/live-heap.js';
import { printTable } from './support/markdown-table.js';
import { until } from '../dev/wait/until.js';
import { syncedInformer } from './support/static-informer.js';
import { ACL_NAMESPACE, syntheticGrant } from './support/synthetic-grant.js';
import { syntheticMembership } from './support/synthetic-membership.js';
import { sleep } from '../dev/wait/sleep.js';

const OVERALL_TIMEOUT_MS = 60 * 60_000;
const LIST_TIMEOUT_MS = 300_000;
const PAGE_SIZE = 500;
/** Objects built and written at a time, so that the benchmark never holds all of them. */
const WRITE_CHUNK = 10_000;
const SIMULATED = 1_000_000;
const GIB = 1024 ** 3;

type KindName = 'grants' | 'memberships';

interface Kind {
  name: KindName;
  plural: string;
  path: string;
  make: (index: number) => KubernetesObject;
}

const KINDS: Kind[] = [
  {
    name: 'grants',
    plural: 'policygrants',
    path: collectionPath(POLICY_GRANT_RESOURCE, ACL_NAMESPACE),
    make: syntheticGrant,
  },
  {
    name: 'memberships',
    plural: 'memberships',
    path: collectionPath(MEMBERSHIP_RESOURCE, ACL_NAMESPACE),
    make: syntheticMembership,
  },
];

interface CacheOutput {
  idleHeapBytes: number;
  cacheHeapBytes: number;
  indexedHeapBytes: number;
}

interface ListOutput {
  ms: number;
  bytes: number;
  apiserverRssBytes: number;
  apiserverPeakRssBytes: number;
}

interface Measured {
  kind: KindName;
  count: number;
  jsonBytesPerObject: number;
  etcdBytesPerObject: number;
  cacheBytesPerObject: number;
  indexedBytesPerObject: number;
  paginated: ListOutput;
  unpaginated: ListOutput | undefined;
}

const etcdKey = (kind: Kind, name: string) =>
  `/registry/acl.policygrant.dev/${kind.plural}/${ACL_NAMESPACE}/${name}`;

/** An object as kube-apiserver stores it: JSON without resourceVersion (etcd's revision is), newline-ended. */
function storedValue(object: KubernetesObject): string {
  const { resourceVersion: _dropped, ...metadata } = object.metadata ?? {};
  return `${JSON.stringify({ ...object, metadata })}\n`;
}

/**
 * Creates one object of the kind through the API and reads it back from etcd under the key this benchmark
 * writes to (kube-apiserver's default --etcd-prefix /registry, then group, plural, namespace, name): the
 * objects written straight into etcd are where kube-apiserver looks for them. Deleted again afterwards.
 */
async function checkKeyLayout(kube: KubeClient, etcd: EtcdGateway, kind: Kind): Promise<void> {
  const {
    apiVersion,
    kind: kindName,
    metadata,
    spec,
  } = kind.make(10_000_000) as KubernetesObject & {
    spec: unknown;
  };
  const name = metadata?.name ?? '';
  const body = { apiVersion, kind: kindName, metadata: { name, namespace: ACL_NAMESPACE }, spec };
  await kube.call({ method: 'POST', path: kind.path, body });
  const stored = await etcd.get(etcdKey(kind, name));
  const parsed = stored === undefined ? undefined : (JSON.parse(stored) as KubernetesObject);
  if (parsed?.metadata?.name !== name || parsed.metadata.resourceVersion !== undefined)
    throw new Error(
      `${kind.name}: kube-apiserver did not store ${name} as JSON under ${etcdKey(kind, name)}`,
    );
  await kube.call({ method: 'DELETE', path: `${kind.path}/${name}` });
}

/** etcd's in-use size once its backend has committed: two equal readings a second apart (at most 30 s). */
async function settledDbSize(etcd: EtcdGateway): Promise<number> {
  let previous = -1;
  let current = await etcd.dbSizeInUse();
  for (let attempt = 0; attempt < 30 && current !== previous; attempt++) {
    await sleep(1_000);
    [previous, current] = [current, await etcd.dbSizeInUse()];
  }
  return current;
}

/** Writes objects `from` up to `to` into etcd; the total length of their stored JSON. */
async function writeObjects(etcd: EtcdGateway, kind: Kind, from: number, to: number): Promise<number> {
  let jsonBytes = 0;
  for (let start = from; start < to; start += WRITE_CHUNK) {
    const entries: EtcdEntry[] = [];
    for (let index = start; index < Math.min(to, start + WRITE_CHUNK); index++) {
      const object = kind.make(index);
      const value = storedValue(object);
      jsonBytes += Buffer.byteLength(value);
      entries.push({ key: etcdKey(kind, object.metadata?.name ?? ''), value });
    }
    await etcd.putAll(entries);
  }
  return jsonBytes;
}

/**
 * How many objects a LIST as the informers send it (no resourceVersion: consistent) counts, or -1 while
 * kube-apiserver answers 504: its watch cache learns of writes straight into etcd through its watch only, and
 * a consistent LIST waits a few seconds for it to catch up, then gives up.
 */
async function listedCount(kube: KubeClient, path: string): Promise<number> {
  try {
    const page = await kube.call<{ items: unknown[]; metadata: { remainingItemCount?: number } }>({
      method: 'GET',
      path,
      query: { limit: 1 },
    });
    return page.items.length + (page.metadata.remainingItemCount ?? 0);
  } catch (error) {
    if (error instanceof KubeApiError && error.statusCode === 504) return -1;
    throw error;
  }
}

function memoryField(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kilobytes = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  if (kilobytes === undefined) throw new Error(`process ${pid} has no ${field}`);
  return Number(kilobytes) * 1024;
}

/** A full LIST, page by page (`limit`) or in one response: time until every item is parsed. */
async function timedList(
  kube: KubeClient,
  apiserverPid: number,
  path: string,
  expected: number,
  limit?: number,
): Promise<ListOutput> {
  writeFileSync(`/proc/${apiserverPid}/clear_refs`, '5'); // resets the peak RSS (VmHWM) to the current RSS
  const apiserverRssBytes = memoryField(apiserverPid, 'VmRSS');
  const start = performance.now();
  let [items, bytes, continueToken] = [0, 0, undefined as string | undefined];
  do {
    const response = await kube.open({
      method: 'GET',
      path,
      query: { limit, continue: continueToken },
      signal: AbortSignal.timeout(LIST_TIMEOUT_MS),
    });
    const body = await readBody(response);
    if (response.statusCode !== 200)
      throw new KubeApiError(response.statusCode ?? 0, undefined, `LIST ${path}: ${body.slice(0, 200)}`);
    const page = JSON.parse(body) as { items: unknown[]; metadata: { continue?: string } };
    [items, bytes, continueToken] = [items + page.items.length, bytes + body.length, page.metadata.continue];
  } while (continueToken);
  const ms = performance.now() - start;
  if (items !== expected) throw new Error(`LIST ${path}: ${items} items, expected ${expected}`);
  return { ms, bytes, apiserverRssBytes, apiserverPeakRssBytes: memoryField(apiserverPid, 'VmHWM') };
}

/** timedList, again while kube-apiserver answers 504 (its watch cache still behind etcd; at most 60 tries). */
async function timedListOnceCaughtUp(...args: Parameters<typeof timedList>): Promise<ListOutput> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await timedList(...args);
    } catch (error) {
      if (!(error instanceof KubeApiError && error.statusCode === 504) || attempt === 60) throw error;
      console.error(`${error.message}: again in 2 s`);
      await sleep(2_000);
    }
  }
}

/** In the child: the kind's objects listed into the controller's cache, then indexed as the controller does. */
async function child(kindName: KindName, kubeconfigPath: string, count: number): Promise<CacheOutput> {
  const kube = new KubeClient(loadKubeConfig(kubeconfigPath));
  const idleHeapBytes = liveHeap();
  const pool = new InternPool();
  if (kindName === 'grants') {
    const transform = grantCacheTransform(pool) as (grant: PolicyGrant) => PolicyGrant;
    const grants = await syncedInformer(
      kubeListWatch<PolicyGrant>(kube, collectionPath(POLICY_GRANT_RESOURCE, ACL_NAMESPACE)),
      transform,
    );
    const cacheHeapBytes = liveHeap();
    const indexes = await indexSyntheticGrants(grants, count);
    const indexedHeapBytes = liveHeap();
    await Promise.all([grants.stop(), indexes.stop()]);
    return { idleHeapBytes, cacheHeapBytes, indexedHeapBytes };
  }
  const transform = membershipCacheTransform(pool) as (membership: Membership) => Membership;
  const memberships = await syncedInformer(
    kubeListWatch<Membership>(kube, collectionPath(MEMBERSHIP_RESOURCE, ACL_NAMESPACE)),
    transform,
  );
  const cacheHeapBytes = liveHeap();
  const view = new ProjectedView(memberships, membershipKind);
  const indexedHeapBytes = liveHeap();
  if (view.all().length !== count) throw new Error('memberships went missing');
  await memberships.stop();
  return { idleHeapBytes, cacheHeapBytes, indexedHeapBytes };
}

async function runChild(kind: KindName, kubeconfigPath: string, count: number): Promise<CacheOutput> {
  const script = `${repoRoot()}/bench/capacity.ts`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', script, '--child', kind, kubeconfigPath, String(count)],
    { maxBuffer: 1 << 20, timeout: LIST_TIMEOUT_MS },
  );
  return JSON.parse(stdout) as CacheOutput;
}

async function measure(
  context: { kube: KubeClient; kubeconfigPath: string; etcd: EtcdGateway; apiserverPid: number },
  kind: Kind,
  written: number,
  count: number,
  unpaginatedMax: number,
): Promise<Measured> {
  const { kube, etcd, apiserverPid } = context;
  const before = await settledDbSize(etcd);
  const jsonBytes = await writeObjects(etcd, kind, written, count);
  await until(
    async () => (await listedCount(kube, kind.path)) === count,
    `kube-apiserver to list ${count} ${kind.name}`,
    LIST_TIMEOUT_MS,
    1_000,
  );
  const added = count - written;
  const etcdBytesPerObject = ((await settledDbSize(etcd)) - before) / added;
  console.error(`${count} ${kind.name} in etcd; listing`);
  const paginated = await timedListOnceCaughtUp(kube, apiserverPid, kind.path, count, PAGE_SIZE);
  const unpaginated =
    count <= unpaginatedMax ? await timedListOnceCaughtUp(kube, apiserverPid, kind.path, count) : undefined;
  const cache = await runChild(kind.name, context.kubeconfigPath, count);
  return {
    kind: kind.name,
    count,
    jsonBytesPerObject: jsonBytes / added,
    etcdBytesPerObject,
    cacheBytesPerObject: (cache.cacheHeapBytes - cache.idleHeapBytes) / count,
    indexedBytesPerObject: (cache.indexedHeapBytes - cache.idleHeapBytes) / count,
    paginated,
    unpaginated,
  };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const thousands = (n: number) => n.toLocaleString('en');
const listCell = (list: ListOutput | undefined) =>
  list
    ? `${seconds(list.ms)}, ${mb(list.bytes)}, apiserver ${mb(list.apiserverRssBytes)} → ${mb(list.apiserverPeakRssBytes)}`
    : 'not run';

function printMeasured(rows: Measured[]): void {
  printTable(
    [
      'kind',
      'objects',
      'JSON per object',
      'etcd per object',
      'cache',
      'cache + indexes',
      'LIST, limit 500',
      'LIST, one response',
    ],
    rows.map((row) => [
      row.kind,
      thousands(row.count),
      kb(row.jsonBytesPerObject),
      kb(row.etcdBytesPerObject),
      kb(row.cacheBytesPerObject),
      kb(row.indexedBytesPerObject),
      listCell(row.paginated),
      listCell(row.unpaginated),
    ]),
  );
}

/** Linear in the object count from the kind's two largest measured sizes (through zero with one size). */
function extrapolate(rows: Measured[], value: (row: Measured) => number): number {
  const [low, high] = rows.length > 1 ? rows.slice(-2) : [undefined, rows[0] as Measured];
  const [lowCount, lowValue] = low ? [low.count, value(low)] : [0, 0];
  const slope = (value(high) - lowValue) / (high.count - lowCount);
  return value(high) + slope * (SIMULATED - high.count);
}

function printSimulated(rows: Measured[]): void {
  const byKind = KINDS.map((kind) => rows.filter((row) => row.kind === kind.name)).filter(
    (kindRows) => kindRows.length,
  );
  printTable(
    [
      'kind',
      'objects',
      'etcd, live data',
      'controller heap (cache + indexes)',
      'LIST, limit 500',
      'objects in a 2 GiB / 8 GiB quota (live data)',
    ],
    byKind.map((kindRows) => {
      const last = kindRows.at(-1) as Measured;
      return [
        last.kind,
        `${thousands(SIMULATED)} (extrapolated, not measured)`,
        mb(last.etcdBytesPerObject * SIMULATED),
        mb(last.indexedBytesPerObject * SIMULATED),
        seconds(extrapolate(kindRows, (row) => row.paginated.ms)),
        `${thousands(Math.floor((2 * GIB) / last.etcdBytesPerObject))} / ${thousands(Math.floor((8 * GIB) / last.etcdBytesPerObject))}`,
      ];
    }),
  );
}

function options(): { sizes: number[]; unpaginatedMax: number } {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10000,100000' },
      'unpaginated-max': { type: 'string', default: '100000' },
    },
  });
  const sizes = String(values.sizes).split(',').filter(Boolean).map(Number);
  if (sizes.some((size, i) => !(size > (sizes[i - 1] ?? 0))))
    throw new Error('--sizes: growing positive counts');
  return { sizes, unpaginatedMax: Number(values['unpaginated-max']) };
}

async function main(): Promise<void> {
  const { sizes, unpaginatedMax } = options();
  const stateDir = await mkdtemp(join(tmpdir(), 'bench-capacity-'));
  console.error('starting etcd and kube-apiserver (loopback) …');
  const plane = await startLocalControlPlane({ stateDir, withSpiceDB: false });
  const timer = setTimeout(() => {
    console.error(`benchmark exceeded ${OVERALL_TIMEOUT_MS / 60_000} min; stopping`);
    void plane.stop().finally(() => process.exit(1));
  }, OVERALL_TIMEOUT_MS);
  try {
    const kube = new KubeClient(plane.kubeConfig());
    const apiserver = plane.processes().find((process) => process.name === 'kube-apiserver');
    if (!apiserver) throw new Error('no kube-apiserver');
    const context = {
      kube,
      kubeconfigPath: plane.kubeconfigPath,
      etcd: new EtcdGateway(plane.etcdUrl),
      apiserverPid: apiserver.pid,
    };
    await kube.call({
      method: 'POST',
      path: collectionPath(NAMESPACE_RESOURCE),
      body: { metadata: { name: ACL_NAMESPACE } },
    });
    const rows: Measured[] = [];
    for (const kind of KINDS) {
      await checkKeyLayout(kube, context.etcd, kind);
      for (const [i, size] of sizes.entries())
        rows.push(await measure(context, kind, sizes[i - 1] ?? 0, size, unpaginatedMax));
    }
    console.log(
      `\nMeasured (etcd ${await etcdVersion(plane.etcdUrl)}; LIST: time until parsed, response size, kube-apiserver's RSS before → peak):`,
    );
    printMeasured(rows);
    console.log(
      `\nSimulated: ${thousands(SIMULATED)} objects, extrapolated linearly from the measured rows (not measured):`,
    );
    printSimulated(rows);
  } finally {
    clearTimeout(timer);
    await plane.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function etcdVersion(etcdUrl: string): Promise<string> {
  const response = await fetch(`${etcdUrl}/version`, { signal: AbortSignal.timeout(10_000) });
  return ((await response.json()) as { etcdserver: string }).etcdserver;
}

if (process.argv[2] === '--child') {
  const [kind, kubeconfigPath, objects] = process.argv.slice(3) as [KindName, string, string];
  console.log(JSON.stringify(await child(kind, kubeconfigPath, Number(objects))));
} else {
  await main();
}
