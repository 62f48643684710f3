import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// client-node's generated client stays here on purpose: it is the baseline the pooled transport is measured against.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { Pool } from 'undici';
import {
  API_GROUP,
  API_VERSION,
  GROUP_VERSION,
  POLICY_GRANT_KIND,
  POLICY_GRANT_PLURAL,
} from '../src/api/v1alpha1/index.js';
import { settleAll, valuesOrThrow } from '../src/acl/concurrency.js';
import { KubeClient } from '../src/kube/kube-client.js';
import { ACL_API_FIELD_MANAGER } from '../src/audit/field-managers.js';
import { paths } from '../src/acl/resources.js';
import { ensureDevSigningKey } from '../dev/tokens/dev-signing-key.js';
import { mintToken } from '../dev/tokens/dev-token.js';
import type { RunningAclApi } from '../src/acl/acl-server.js';
import { startLocalControlPlane } from '../dev/localplane/control-plane.js';
import { resolvePostgresBinaries } from '../dev/localplane/postgres-binaries.js';
import { startPostgres } from '../dev/localplane/postgres-server.js';
import { createBenchItem, createNamespace, individualGrant, startBenchAclApi } from './support/acl-api.js';
import { parseNodeRuntime, runCompiled } from './support/node-runtime.js';
import { processCpuMs, processTreeCpuMs } from './support/process-cpu.js';
import { median, percentile } from './support/statistics.js';
import { until } from '../dev/wait/until.js';

// npm run bench:acl — create throughput through the ACL API against raw PolicyGrant creates with
// @kubernetes/client-node, and listing latency with 10,000 grants in the cache. Loopback only: it starts
// its own control plane (etcd + kube-apiserver) and stops everything at the end. It runs compiled, as the image
// runs the API (BENCH_RUNTIME=tsx: from the sources).

const CREATES = Number(process.env.BENCH_CREATES ?? 500);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const CACHE_SIZE = Number(process.env.BENCH_GRANTS ?? 10_000);
const PROVIDER_SHARE = 0.1;
const LISTING_REQUESTS = Number(process.env.BENCH_LISTINGS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Row {
  measure: string;
  value: string;
}

function grantSpec(itemId: string, issuerId: string) {
  return { ...individualGrant(itemId), issuerId };
}

/** The processes whose CPU a create costs: this one (the load generator, and the API), the control plane's, PostgreSQL. */
type CpuSources = Record<string, () => number>;

interface PathRun {
  rate: number;
  /** CPU milliseconds per create, by process. */
  cpuPerCreate: Record<string, number>;
}

interface CreatePath {
  label: string;
  run: (count: number) => Promise<void>;
}

async function measured(path: CreatePath, cpu: CpuSources, count: number): Promise<PathRun> {
  const before = Object.fromEntries(Object.entries(cpu).map(([name, read]) => [name, read()]));
  const started = performance.now();
  await path.run(count);
  const seconds = (performance.now() - started) / 1000;
  const cpuPerCreate = Object.fromEntries(
    Object.entries(cpu).map(([name, read]) => [name, (read() - (before[name] ?? 0)) / count]),
  );
  console.error(`  ${path.label}: ${count} in ${seconds.toFixed(2)} s = ${(count / seconds).toFixed(0)}/s`);
  return { rate: count / seconds, cpuPerCreate };
}

/**
 * Each path `ROUNDS` times, the order rotating from round to round so that every path sees the machine's
 * background alike; medians per path.
 */
async function createRounds(paths: CreatePath[], cpu: CpuSources): Promise<PathRun[][]> {
  const runs: PathRun[][] = paths.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    console.error(`round ${round + 1} of ${ROUNDS}`);
    for (let turn = 0; turn < paths.length; turn++) {
      const index = (round + turn) % paths.length;
      runs[index]?.push(await measured(paths[index] as CreatePath, cpu, CREATES));
    }
  }
  return runs;
}

function cpuLine(cpuPerCreate: Record<string, number>): string {
  return Object.entries(cpuPerCreate)
    .map(([name, milliseconds]) => `${name} ${milliseconds.toFixed(2)}`)
    .join(', ');
}

function medianRun(runs: PathRun[]): PathRun {
  const names = Object.keys(runs[0]?.cpuPerCreate ?? {});
  return {
    rate: median(runs.map((run) => run.rate)),
    cpuPerCreate: Object.fromEntries(
      names.map((name) => [name, median(runs.map((run) => run.cpuPerCreate[name] ?? 0))]),
    ),
  };
}

async function rawCreates(kubeConfig: KubeConfig, namespace: string, specs: unknown[]): Promise<void> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  valuesOrThrow(
    await settleAll(specs, CONCURRENCY, (spec) =>
      api.createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace,
        plural: POLICY_GRANT_PLURAL,
        body: {
          apiVersion: GROUP_VERSION,
          kind: POLICY_GRANT_KIND,
          metadata: { generateName: 'bench-' },
          spec,
        },
      }),
    ),
  );
}

/** The same creates over one keep-alive connection pool (the client the API itself uses). */
async function pooledCreates(
  kube: KubeClient,
  namespace: string,
  specs: unknown[],
  concurrency = CONCURRENCY,
) {
  valuesOrThrow(
    await settleAll(specs, concurrency, (spec) =>
      kube.call({
        method: 'POST',
        path: paths.policyGrants(namespace),
        body: {
          apiVersion: GROUP_VERSION,
          kind: POLICY_GRANT_KIND,
          metadata: { generateName: 'bench-' },
          spec,
        },
      }),
    ),
  );
}

/**
 * POST /policy, each a grant to a user of its own, over a keep-alive pool of `CONCURRENCY` connections: undici's
 * (the engine of Node's fetch, without fetch's web streams), so that the load generator's own CPU, charged to
 * this path, is a lean client's.
 */
async function apiCreates(api: RunningAclApi, authorization: string, itemId: string, count: number) {
  const url = new URL(`${api.url}/policy`);
  const pool = new Pool(url.origin, { connections: CONCURRENCY });
  try {
    const results = await settleAll(Array.from({ length: count }), CONCURRENCY, async () => {
      const response = await pool.request({
        path: url.pathname,
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ request: [individualGrant(itemId)] }),
      });
      const text = await response.body.text();
      if (response.statusCode !== 201) throw new Error(`create answered ${response.statusCode}: ${text}`);
    });
    valuesOrThrow(results);
  } finally {
    await pool.close();
  }
}

async function listingLatency(api: RunningAclApi, authorization: string, path: string): Promise<number[]> {
  const durations: number[] = [];
  for (let round = 0; round < LISTING_REQUESTS; round++) {
    const started = performance.now();
    const response = await fetch(`${api.url}${path}`, { headers: { authorization } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    durations.push(performance.now() - started);
  }
  return durations.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  if (await runCompiled(import.meta.url, parseNodeRuntime(process.env.BENCH_RUNTIME ?? 'compiled'))) return;
  const stateDir = await mkdtemp(join(tmpdir(), 'acl-bench-'));
  console.error('starting the control plane (etcd, kube-apiserver) and PostgreSQL…');
  const plane = await startLocalControlPlane({ stateDir, withSpiceDB: false });
  const postgres = await startPostgres({ binaries: await resolvePostgresBinaries(), stateDir });
  let api: RunningAclApi | undefined;
  try {
    const kubeConfig = plane.kubeConfig();
    const namespace = `acl-bench-${randomUUID().slice(0, 8)}`;
    const rawNamespace = `${namespace}-raw`;
    for (const name of [namespace, rawNamespace]) await createNamespace(kubeConfig, name);
    const ownerId = randomUUID();
    const organisationId = randomUUID();
    const itemId = await createBenchItem(kubeConfig, { ownerId, organisationId }, ['api', 'file', 'sub']);
    const key = await ensureDevSigningKey(join(stateDir, 'keys'));
    api = await startBenchAclApi({ kubeConfig, namespace, key, databaseUrl: postgres.url, itemId });
    const bearer = async (sub: string, roles: string[] = []) =>
      `Bearer ${await mintToken(key, { sub, roles, org: organisationId })}`;
    const ownerToken = await bearer(ownerId);

    console.error(`create throughput (${CREATES} grants each, ${CONCURRENCY} in flight, ${ROUNDS} rounds):`);
    await apiCreates(api, ownerToken, itemId, 20); // warm-up: connections, JIT
    await rawCreates(
      kubeConfig,
      rawNamespace,
      Array.from({ length: 20 }, () => grantSpec(itemId, ownerId)),
    );
    // Writes as the ACL API does: under its field manager.
    const kube = new KubeClient(kubeConfig, { fieldManager: ACL_API_FIELD_MANAGER });
    const grantSpecs = (count: number) => Array.from({ length: count }, () => grantSpec(itemId, ownerId));
    const paths: CreatePath[] = [
      {
        label: 'raw PolicyGrant creates, client-node (new TLS connection each)',
        run: (count) => rawCreates(kubeConfig, rawNamespace, grantSpecs(count)),
      },
      {
        label: 'raw PolicyGrant creates, keep-alive pool',
        run: (count) => pooledCreates(kube, rawNamespace, grantSpecs(count)),
      },
      {
        label: 'POST /policy (1 INDIVIDUAL item, 1 access type)',
        run: (count) => apiCreates(api as RunningAclApi, ownerToken, itemId, count),
      },
    ];
    const cpu: CpuSources = {
      'this process': () => {
        const { user, system } = process.cpuUsage();
        return (user + system) / 1000;
      },
      ...Object.fromEntries(
        plane.processes().map((managed) => [managed.name, () => processCpuMs(managed.pid)]),
      ),
      postgres: () => processTreeCpuMs(postgres.process.pid),
    };
    const runs = await createRounds(paths, cpu);
    const medians = runs.map(medianRun);
    const [raw, pooled, viaApi] = medians as [PathRun, PathRun, PathRun];
    const ratios = (runs[2] ?? []).map((run, round) => run.rate / (runs[0]?.[round]?.rate ?? NaN));

    const existing = api.cache.allGrants().length;
    const missing = Math.max(0, CACHE_SIZE - existing);
    const providerId = randomUUID();
    console.error(`filling the cache to ${CACHE_SIZE} grants (${missing} raw creates)…`);
    const specs = Array.from({ length: missing }, (_, index) =>
      grantSpec(itemId, index < CACHE_SIZE * PROVIDER_SHARE ? providerId : randomUUID()),
    );
    await pooledCreates(kube, namespace, specs, 32);
    kube.close();
    const { cache } = api;
    await until(() => cache.allGrants().length >= CACHE_SIZE, `the cache to hold ${CACHE_SIZE} grants`);

    const providerToken = await bearer(providerId);
    const cosToken = await bearer(randomUUID(), ['cos_admin']);
    const listings: [string, string, string][] = [
      ['/policy/provider (limit 50)', '/policy/provider', providerToken],
      ['/policy/platform (limit 50)', '/policy/platform', cosToken],
      [
        '/policy/platform?status=ACTIVE&limit=1000&offset=5000',
        '/policy/platform?status=ACTIVE&limit=1000&offset=5000',
        cosToken,
      ],
    ];
    const rows: Row[] = [
      ...paths.map((path, index) => ({
        measure: path.label,
        value: `${(medians[index] as PathRun).rate.toFixed(0)} /s`,
      })),
      {
        measure: 'ratio API / raw client-node',
        value: `${(viaApi.rate / raw.rate).toFixed(2)} (rounds: ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')})`,
      },
      { measure: 'ratio API / raw keep-alive', value: (viaApi.rate / pooled.rate).toFixed(2) },
      ...paths.map((path, index) => ({
        measure: `CPU ms per create, ${path.label.split(' (')[0]}`,
        value: cpuLine((medians[index] as PathRun).cpuPerCreate),
      })),
    ];
    for (const [label, path, token] of listings) {
      await listingLatency(api, token, path); // warm-up
      const durations = await listingLatency(api, token, path);
      rows.push({
        measure: `${label}, ${api.cache.allGrants().length} grants cached`,
        value: `p50 ${percentile(durations, 50).toFixed(1)} ms, p99 ${percentile(durations, 99).toFixed(1)} ms`,
      });
    }
    const width = Math.max(...rows.map((row) => row.measure.length));
    console.log(`| ${'measure'.padEnd(width)} | value |`);
    console.log(`| ${'-'.repeat(width)} | ----- |`);
    for (const row of rows) console.log(`| ${row.measure.padEnd(width)} | ${row.value} |`);
    console.log(
      `\n(${CREATES} creates, ${CONCURRENCY} in flight; ${LISTING_REQUESTS} sequential listing requests each; ` +
        `provider issued ${CACHE_SIZE * PROVIDER_SHARE} of the grants)`,
    );
  } finally {
    await api?.stop();
    await Promise.all([plane.stop(), postgres.process.stop()]);
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
