// npm run bench:controller-memory [-- --grants 20000,100000 --baseline]
//
// What the grant controller's cache costs: synthetic PolicyGrants shaped like enforced ones made through the ACL
// API (labels, the request-hash annotation, three managedFields entries with their field sets, status with the
// Enforced condition and `projected`) are listed, page by page as JSON from the kube-apiserver, into an informer
// with the controller's transform, then indexed by a ClusterWorld. Each size runs in a process of its own
// (node --expose-gc): live heap after a full GC with the cache alone and with its indexes, and peak RSS.
// --baseline runs each size a second time with the transform before the compact records (stripForCache).
// Nothing but this process: no API server, no SpiceDB.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CatalogItem, PolicyGrant } from '../src/api/v1alpha1/index.js';
import { ClusterWorld } from '../src/controller/cluster-world.js';
import { grantCacheTransform } from '../src/controller/grants/cached-grant.js';
import { repoRoot } from '../src/localplane/repo-root.js';
import { InternPool, stripForCache } from '../src/runtime/index.js';
import { loadRegistry } from '../src/spicedb/registry.js';
import { printTable } from './support/markdown-table.js';
import { staticInformer } from './support/static-informer.js';

const ACL_NAMESPACE = 'policy-grant-system';
/** Grants on one item: a catalogue of this many items. */
const ITEMS = 200;
/** Grants created in one second, as a steady ACL API client makes them: timestamps repeat this often. */
const GRANTS_PER_SECOND = 10;
const CREATED_FROM = Date.parse('2026-06-01T08:00:00Z');

type CacheMode = 'compact' | 'strip';

interface ChildOutput {
  idleHeapBytes: number;
  cacheHeapBytes: number;
  indexedHeapBytes: number;
  peakRssBytes: number;
  idleRssBytes: number;
}

const hex = (index: number, digits: number) => index.toString(16).padStart(digits, '0');
const time = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const itemIdOf = (index: number) => `urn:dx:item:databank:${hex(index % ITEMS, 8)}`;

/** One enforced grant as the API server serves it after the ACL API created it and the controller enforced it. */
function syntheticGrant(index: number): PolicyGrant {
  const created = time(CREATED_FROM + Math.floor(index / GRANTS_PER_SECOND) * 1000);
  const userId = `00000000-0000-4000-8000-${hex(index, 12)}`;
  const itemId = itemIdOf(index);
  const fields = (fieldsV1: object, manager: string, subresource?: string) => ({
    manager,
    operation: 'Update',
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    time: created,
    fieldsType: 'FieldsV1',
    fieldsV1,
    ...(subresource && { subresource }),
  });
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'PolicyGrant',
    metadata: {
      name: `pg-${randomUUID().replaceAll('-', '').slice(0, 32)}${hex(index, 8)}`,
      namespace: ACL_NAMESPACE,
      uid: randomUUID(),
      resourceVersion: String(1_000_000 + index * 3),
      generation: 1,
      creationTimestamp: created as unknown as Date,
      labels: { 'acl.policygrant.dev/created-by': 'acl-api' },
      annotations: { 'acl.policygrant.dev/request-hash': randomUUID().replaceAll('-', '').repeat(2) },
      finalizers: ['acl.policygrant.dev/relationships'],
      managedFields: [
        fields(
          {
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:acl.policygrant.dev/request-hash': {} },
              'f:labels': { '.': {}, 'f:acl.policygrant.dev/created-by': {} },
            },
            'f:spec': {
              '.': {},
              'f:constraints': { '.': {}, 'f:access': {} },
              'f:expiryTime': {},
              'f:issuerId': {},
              'f:itemId': {},
              'f:itemType': {},
              'f:policyType': {},
              'f:userId': {},
            },
          },
          'policy-grant-acl-api',
        ),
        fields(
          { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"acl.policygrant.dev/relationships"': {} } } },
          'policy-grant-controller',
        ),
        fields(
          {
            'f:status': {
              '.': {},
              'f:conditions': { '.': {}, 'k:{"type":"Enforced"}': { '.': {}, 'f:lastTransitionTime': {} } },
              'f:observedGeneration': {},
              'f:projected': { '.': {}, 'f:relations': {}, 'f:resource': {}, 'f:subjects': {} },
              'f:relationships': {},
              'f:state': {},
              'f:zedToken': {},
            },
          },
          'policy-grant-controller',
          'status',
        ),
      ] as never,
    },
    spec: {
      policyType: 'INDIVIDUAL',
      userId,
      itemId,
      itemType: 'DATABANK',
      expiryTime: '2027-12-31T00:00:00Z',
      constraints: { access: [{ accessType: 'api' }] },
      issuerId: `00000000-0000-4000-9000-${hex(index % 50, 12)}`,
    },
    status: {
      observedGeneration: 1,
      state: 'ACTIVE',
      conditions: [
        {
          type: 'Enforced',
          status: 'True',
          reason: 'Projected',
          message: '1 relationship written to SpiceDB',
          lastTransitionTime: created,
          observedGeneration: 1,
        },
      ],
      relationships: 1,
      zedToken: `GhUKEzE3${hex(index * 7919, 12)}MDAwMDAwMDA=`,
      projected: {
        resource: `resource:${itemId.replaceAll(':', '=3A')}`,
        relations: ['api_consumer'],
        subjects: [`user:${userId}`],
      },
    },
  };
}

const catalogItem = (index: number): CatalogItem => ({
  apiVersion: 'acl.policygrant.dev/v1alpha1',
  kind: 'CatalogItem',
  metadata: { name: `item-${index}` },
  spec: {
    itemId: itemIdOf(index),
    itemType: 'DATABANK',
    ownerId: randomUUID(),
    organisationId: randomUUID(),
    accessTypes: ['api'],
  },
});

function liveHeap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

async function child(count: number, mode: CacheMode): Promise<ChildOutput> {
  const idleHeapBytes = liveHeap();
  const idleRssBytes = process.memoryUsage().rss;
  const transform = mode === 'compact' ? grantCacheTransform(new InternPool()) : stripForCache;
  const grants = await staticInformer(
    count,
    syntheticGrant,
    transform as (grant: PolicyGrant) => PolicyGrant,
  );
  const cacheHeapBytes = liveHeap();
  const items = await staticInformer(ITEMS, catalogItem, stripForCache);
  const namespaces = await staticInformer<KubernetesObject>(0, () => ({}), stripForCache);
  const world = new ClusterWorld({
    grants,
    items,
    namespaces,
    registry: loadRegistry(),
    aclNamespace: ACL_NAMESPACE,
  });
  const indexedHeapBytes = liveHeap();
  if (world.grantsOnItem(itemIdOf(0)).length !== Math.ceil(count / ITEMS))
    throw new Error('grants went missing');
  await Promise.all([grants.stop(), items.stop(), namespaces.stop()]);
  return {
    idleHeapBytes,
    cacheHeapBytes,
    indexedHeapBytes,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    idleRssBytes,
  };
}

async function runChild(count: number, mode: CacheMode): Promise<ChildOutput> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      `${repoRoot()}/bench/controller-memory.ts`,
      '--child',
      String(count),
      mode,
    ],
    { maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout) as ChildOutput;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      grants: { type: 'string', default: '20000,100000' },
      baseline: { type: 'boolean', default: false },
    },
  });
  const sizes = String(values.grants).split(',').filter(Boolean).map(Number);
  const modes: CacheMode[] = values.baseline ? ['strip', 'compact'] : ['compact'];
  const header = ['grants', 'cache', 'cache alone', 'cache + indexes', 'per 10,000', 'peak RSS', 'idle RSS'];
  const rows: string[][] = [];
  for (const count of sizes) {
    for (const mode of modes) {
      const out = await runChild(count, mode);
      const grantsHeap = out.indexedHeapBytes - out.idleHeapBytes;
      rows.push([
        count.toLocaleString('en'),
        mode === 'compact' ? 'compact records' : 'stripForCache (before)',
        mb(out.cacheHeapBytes - out.idleHeapBytes),
        mb(grantsHeap),
        mb((grantsHeap / count) * 10_000),
        mb(out.peakRssBytes),
        mb(out.idleRssBytes),
      ]);
      console.error(`done: ${count} grants, ${mode}`);
    }
  }
  printTable(header, rows);
}

if (process.argv[2] === '--child') {
  const [count, mode] = [Number(process.argv[3]), process.argv[4] as CacheMode];
  console.log(JSON.stringify(await child(count, mode)));
} else {
  await main();
}
