import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import pg from 'pg';
import { ensureDevSigningKey, type DevSigningKey } from '../dev/tokens/dev-signing-key.js';
import { mintToken } from '../dev/tokens/dev-token.js';
import type { RunningAclApi } from '../src/acl/acl-server.js';
import { startLocalControlPlane } from '../dev/localplane/control-plane.js';
import { resolvePostgresBinaries } from '../dev/localplane/postgres-binaries.js';
import { startPostgres } from '../dev/localplane/postgres-server.js';
import { createBenchItem, createNamespace, individualGrant, startBenchAclApi } from './support/acl-api.js';
import { percentile } from './support/statistics.js';

// npm run bench:audit — what the audit trail costs: the latency of POST /policy through the ACL API with
// auditing on and off (two APIs of one run, requests interleaved), and the latency of GET /audit?actor=<one>
// among 1,000,000 records (loaded in SQL with generate_series). Loopback only: it starts its own control plane
// (etcd + kube-apiserver) and PostgreSQL and stops everything at the end.

const CREATES = Number(process.env.BENCH_CREATES ?? 300);
const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000);
const ACTORS = 1_000;
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
const WARM_UP = 20;
/** GET /audit's default page, or every record of an actor when fewer. */
const PAGE = Math.min(50, Math.floor(RECORDS / ACTORS));

interface Bench {
  kubeConfig: KubeConfig;
  key: DevSigningKey;
  databaseUrl: string;
  itemId: string;
}

async function startApi(bench: Bench, auditing: boolean): Promise<RunningAclApi> {
  const namespace = `audit-bench-${auditing ? 'on' : 'off'}-${randomUUID().slice(0, 8)}`;
  await createNamespace(bench.kubeConfig, namespace);
  return startBenchAclApi({ ...bench, namespace, auditing });
}

/** One POST /policy of one INDIVIDUAL grant; its latency in milliseconds. */
async function timedCreate(api: RunningAclApi, authorization: string, itemId: string): Promise<number> {
  const body = { request: [individualGrant(itemId)] };
  const started = performance.now();
  const response = await fetch(`${api.url}/policy`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  if (response.status !== 201) throw new Error(`create answered ${response.status}`);
  return performance.now() - started;
}

/** Sequential creates, alternating between the two APIs so that both see the same machine load. */
async function createLatencies(on: RunningAclApi, off: RunningAclApi, authorization: string, itemId: string) {
  const latencies = { on: [] as number[], off: [] as number[] };
  for (let round = 0; round < WARM_UP + CREATES; round++) {
    const first = round % 2 === 0 ? 'on' : 'off';
    for (const mode of [first, first === 'on' ? 'off' : 'on'] as const) {
      const duration = await timedCreate(mode === 'on' ? on : off, authorization, itemId);
      if (round >= WARM_UP) latencies[mode].push(duration);
    }
  }
  return { on: latencies.on.sort((a, b) => a - b), off: latencies.off.sort((a, b) => a - b) };
}

/** RECORDS records of ACTORS actors, appended after the chain's end in one statement (hashes not chained). */
async function loadRecords(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const started = performance.now();
    await client.query(
      `INSERT INTO audit.records (id, time, actor_type, actor_id, action, target_kind, target_id, target_item_id,
         target_organisation_id, outcome_status, outcome_detail, request_id, prev_hash, hash)
       SELECT base.id + i, now() - make_interval(secs => $1 - i), 'user', 'bench-actor-' || (i % $2),
              'policy.created', 'policy', md5(i::text), 'urn:dx:item:bench', 'bench-org', 201, '1 policy created',
              'bench-' || i, repeat('0', 64), repeat('0', 64)
       FROM (SELECT coalesce(max(id), 0) AS id FROM audit.records) base, generate_series(1, $1) i`,
      [RECORDS, ACTORS],
    );
    await client.query('ANALYZE audit.records');
    return (performance.now() - started) / 1000;
  } finally {
    await client.end();
  }
}

async function queryLatencies(api: RunningAclApi, authorization: string): Promise<number[]> {
  const durations: number[] = [];
  for (let round = 0; round < WARM_UP + QUERIES; round++) {
    const actor = `bench-actor-${(round * 7919) % ACTORS}`;
    const started = performance.now();
    const response = await fetch(`${api.url}/audit?actor=${actor}`, { headers: { authorization } });
    const body = (await response.json()) as { results?: unknown[] };
    if (response.status !== 200 || body.results?.length !== PAGE)
      throw new Error(`GET /audit answered ${response.status} with ${body.results?.length} records`);
    if (round >= WARM_UP) durations.push(performance.now() - started);
  }
  return durations.sort((a, b) => a - b);
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const spread = (sorted: number[]) => `p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}`;

async function main(): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'audit-bench-'));
  console.error('starting the control plane (etcd, kube-apiserver) and PostgreSQL…');
  const plane = await startLocalControlPlane({ stateDir, withSpiceDB: false });
  const postgres = await startPostgres({ binaries: await resolvePostgresBinaries(), stateDir });
  const apis: RunningAclApi[] = [];
  try {
    const kubeConfig = plane.kubeConfig();
    const ownerId = randomUUID();
    const organisationId = randomUUID();
    const itemId = await createBenchItem(kubeConfig, { ownerId, organisationId }, ['api']);
    const key = await ensureDevSigningKey(join(stateDir, 'keys'));
    const bench: Bench = { kubeConfig, key, databaseUrl: postgres.url, itemId };
    const on = await startApi(bench, true);
    apis.push(on);
    const off = await startApi(bench, false);
    apis.push(off);
    const ownerToken = `Bearer ${await mintToken(key, { sub: ownerId, roles: [], org: organisationId })}`;

    console.error(`${CREATES} sequential creates with auditing on and off, interleaved…`);
    const creates = await createLatencies(on, off, ownerToken, itemId);
    console.error(`loading ${RECORDS} audit records…`);
    const loadSeconds = await loadRecords(postgres.url);
    const cosToken = `Bearer ${await mintToken(key, { sub: randomUUID(), roles: ['cos_admin'] })}`;
    const queries = await queryLatencies(on, cosToken);

    const rows: [string, string][] = [
      ['POST /policy, auditing on', spread(creates.on)],
      ['POST /policy, auditing off', spread(creates.off)],
      [
        'added by auditing (p50, p99)',
        `${ms(percentile(creates.on, 50) - percentile(creates.off, 50))}, ` +
          `${ms(percentile(creates.on, 99) - percentile(creates.off, 99))}`,
      ],
      [
        'ratio on / off (p50, p99)',
        `${(percentile(creates.on, 50) / percentile(creates.off, 50)).toFixed(2)}, ` +
          `${(percentile(creates.on, 99) / percentile(creates.off, 99)).toFixed(2)}`,
      ],
      [`load of ${RECORDS} records (one INSERT … generate_series)`, `${loadSeconds.toFixed(1)} s`],
      [
        `GET /audit?actor=<one of ${ACTORS}> among ${RECORDS} records (first page of ${PAGE})`,
        spread(queries),
      ],
    ];
    const width = Math.max(...rows.map(([measure]) => measure.length));
    console.log(`| ${'measure'.padEnd(width)} | value |`);
    console.log(`| ${'-'.repeat(width)} | ----- |`);
    for (const [measure, value] of rows) console.log(`| ${measure.padEnd(width)} | ${value} |`);
    console.log(
      `\n(${CREATES} sequential creates per mode after ${WARM_UP} of warm-up; ${QUERIES} sequential queries)`,
    );
  } finally {
    await Promise.allSettled(apis.map((api) => api.stop()));
    await Promise.all([plane.stop(), postgres.process.stop()]);
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
