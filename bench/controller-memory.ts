// npm run bench:controller-memory [-- --grants 20000,100000 --baseline]
//
// What the grant controller's cache costs: synthetic PolicyGrants shaped like enforced ones made through the ACL
// API (labels, the request-hash annotation, three managedFields entries with their field sets, status with the
// Enforced condition and `projected`) are listed, page by page as JSON from the kube-apiserver, into an informer
// with the controller's transform, then indexed by a ClusterView. Each size runs in a process of its own
// (node --expose-gc): live heap after a full GC with the cache alone and with its indexes, and peak RSS.
// --baseline runs each size a second time with the transform before the compact records (stripForCache).
// Nothing but this process: no API server, no SpiceDB.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import type { PolicyGrant } from '../src/api/v1alpha1/index.js';
import { grantCacheTransform } from '../src/controller/grants/cached-grant.js';
import { repoRoot } from '../dev/localplane/repo-root.js';
import { InternPool, stripForCache } from '../src/runtime/index.js';
import { printTable } from './support/markdown-table.js';
import { staticInformer } from './support/static-informer.js';
import { indexSyntheticGrants } from './support/grant-view.js';
import { liveHeap } from './support/live-heap.js';
import { syntheticGrant } from './support/synthetic-grant.js';

type CacheMode = 'compact' | 'strip';

interface ChildOutput {
  idleHeapBytes: number;
  cacheHeapBytes: number;
  indexedHeapBytes: number;
  peakRssBytes: number;
  idleRssBytes: number;
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
  const indexes = await indexSyntheticGrants(grants, count);
  const indexedHeapBytes = liveHeap();
  await Promise.all([grants.stop(), indexes.stop()]);
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
