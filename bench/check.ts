// npm run bench:check [-- --grants 10000 --requests 20000 --seconds 3 --concurrency 1,8,32 --rounds 6]
//
// Direct CheckPermission through the SpiceDB client against POST /v1/check through the decision service:
// one SpiceDB of its own (memory datastore, loopback), the same relationships, the same request mix, the
// same consistency (minimize_latency). The decision service runs in this process, as the dev stack runs
// it; the load runs in a worker thread for both modes, so that the client's work is never the service's.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import type { MetricValueWithName, Registry as MetricsRegistry } from 'prom-client';
import { ensureDevSigningKey } from '../src/auth/dev-signing-key.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER, mintToken } from '../src/auth/dev-token.js';
import { createJwtVerifier } from '../src/auth/jwt-verifier.js';
import { spicedbQuery } from '../src/decision/check-evaluator.js';
import type { CheckRequestBody } from '../src/decision/check-request.js';
import { DECISION_CLIENT_ROLE } from '../src/decision/check-callers.js';
import { startDecisionService } from '../src/decision/decision-service.js';
import { DEFAULT_REVISION_BARRIER } from '../src/decision/revision-barrier.js';
import { startSpiceDB } from '../src/localplane/spicedb-server.js';
import { resolveToolPaths } from '../src/localplane/tool-paths.js';
import { createMetricsRegistry } from '../src/observability/metrics.js';
import { SpiceDBClient } from '../src/spicedb/client.js';
import type { CheckPermissionInput, Consistency, RelationshipUpdate } from '../src/spicedb/client.js';
import { encodeObjectId, groupObjectId } from '../src/spicedb/object-id.js';
import { loadRegistry } from '../src/spicedb/registry.js';
import { readSchemaText } from '../src/spicedb/schema.js';

type Mode = 'direct' | 'service';

interface Check {
  body: CheckRequestBody;
  query: CheckPermissionInput;
  /** Whether the seeded relationships allow it; both modes must agree with it. */
  expected: boolean;
}

interface RunRequest {
  mode: Mode;
  concurrency: number;
  requests: number;
  seconds: number;
}

interface RunResult {
  latenciesMs: Float64Array;
  elapsedMs: number;
  /** CPU time of this process (load generator and, for the service path, the service) and of SpiceDB. */
  nodeCpuMs: number;
  spicedbCpuMs: number;
  /** Service path: time inside the service (arrival to response end) and its SpiceDB calls, summed. */
  serverMs: number;
  spicedbCallMs: number;
  allowed: number;
  wrong: number;
  failed: number;
}

interface LoadSetup {
  checks: Check[];
  spicedb: { endpoint: string; token: string };
  checkUrl: string;
  authorization: string;
}

// ---------------------------------------------------------------------------------------------------------
// Load generator (worker thread)

if (!isMainThread) runLoadWorker(workerData as LoadSetup);

function runLoadWorker(setup: LoadSetup): void {
  const client = new SpiceDBClient({ ...setup.spicedb, transport: 'plaintext' });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const url = new URL(setup.checkUrl);
  const bodies = setup.checks.map((check) => Buffer.from(JSON.stringify(check.body)));
  const headers = { authorization: setup.authorization, 'content-type': 'application/json' };

  const viaService = (index: number): Promise<boolean> =>
    new Promise((resolve, reject) => {
      const body = bodies[index] as Buffer;
      const request = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { ...headers, 'content-length': body.length },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            if (response.statusCode === 200) resolve(allowedIn(Buffer.concat(chunks)));
            else reject(new Error(`status ${response.statusCode}`));
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const direct = async (index: number): Promise<boolean> =>
    (await client.checkPermission((setup.checks[index] as Check).query)).allowed;

  parentPort?.on('message', async (run: RunRequest | 'exit') => {
    if (run === 'exit') {
      client.close();
      agent.destroy();
      parentPort?.close();
      return;
    }
    parentPort?.postMessage(await load(run.mode === 'direct' ? direct : viaService, setup.checks, run));
  });
}

function allowedIn(answer: Buffer): boolean {
  return (JSON.parse(answer.toString()) as { result: { allowed: boolean } }).result.allowed;
}

/** `concurrency` loops, each with one request in flight, until `requests` are done or time is up. */
async function load(
  send: (index: number) => Promise<boolean>,
  checks: Check[],
  run: RunRequest,
): Promise<RunResult> {
  const latenciesMs = new Float64Array(run.requests);
  const result = { allowed: 0, wrong: 0, failed: 0 };
  let next = 0;
  let done = 0;
  const started = performance.now();
  const stopAt = started + run.seconds * 1000;
  const loop = async () => {
    while (next < run.requests && performance.now() < stopAt) {
      const index = next++;
      const check = checks[index % checks.length] as Check;
      const sent = performance.now();
      try {
        const allowed = await send(index % checks.length);
        latenciesMs[done++] = performance.now() - sent;
        if (allowed) result.allowed++;
        if (allowed !== check.expected) result.wrong++;
      } catch {
        result.failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: run.concurrency }, loop));
  return {
    latenciesMs: latenciesMs.slice(0, done),
    elapsedMs: performance.now() - started,
    nodeCpuMs: 0,
    spicedbCpuMs: 0,
    serverMs: 0,
    spicedbCallMs: 0,
    ...result,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Relationships and request mix

/** Seeded: every run builds relationships and a request mix of the same shape. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface World {
  updates: RelationshipUpdate[];
  checks: Check[];
}

/**
 * `grants` relationships shaped like production: individual grants of the three access types (70%),
 * organisation grants (10%), editors and viewers (15%, some of them groups), plus organisation and group
 * memberships. Half of the checks are ones the relationships allow, half random ones that they deny.
 */
function buildWorld(grants: number, distinctChecks: number): World {
  const random = seededRandom(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const registry = loadRegistry();
  const items = Array.from(
    { length: Math.max(10, Math.floor(grants / 10)) },
    (_, i) => `urn:dx:item:bench-${i}`,
  );
  const users = Array.from({ length: Math.max(10, Math.floor(grants / 5)) }, () => randomUUID());
  const organisations = Array.from({ length: 20 }, () => randomUUID());
  const groups = organisations.flatMap((organisation) =>
    ['analysts', 'operators'].map((group) => ({ organisation, group })),
  );
  const expiresAt = new Date(Date.now() + 86_400_000);
  const resource = (item: string) => ({ type: 'resource', id: encodeObjectId(item) });
  const user = (id: string) => ({ type: 'user', id: encodeObjectId(id) });

  const updates: RelationshipUpdate[] = [];
  const allowedChecks: CheckRequestBody[] = [];
  const written = new Set<string>();
  /** False when the relationship is already there: one update per relationship and WriteRelationships. */
  const add = (relationship: RelationshipUpdate['relationship']): boolean => {
    const { resource: object, relation, subject } = relationship;
    const key = `${object.type}:${object.id}#${relation}@${subject.type}:${subject.id}#${subject.relation ?? ''}`;
    if (written.has(key)) return false;
    written.add(key);
    updates.push({ operation: 'touch', relationship });
    return true;
  };
  const members = new Map<string, string[]>();
  for (const organisation of organisations) {
    const inOrganisation = Array.from({ length: 25 }, () => pick(users));
    members.set(organisation, inOrganisation);
    for (const member of new Set(inOrganisation)) {
      add({
        resource: { type: 'organization', id: encodeObjectId(organisation) },
        relation: 'member',
        subject: user(member),
      });
    }
  }
  for (const { organisation, group } of groups) {
    for (const member of new Set(Array.from({ length: 10 }, () => pick(users)))) {
      add({
        resource: { type: 'group', id: groupObjectId(organisation, group) },
        relation: 'member',
        subject: user(member),
      });
    }
  }
  const grant = (): [RelationshipUpdate['relationship'], CheckRequestBody] => {
    const item = pick(items);
    const kind = random();
    if (kind < 0.7) {
      const [consumer, access] = [pick(users), pick(['api', 'file', 'sub'])];
      return [
        { resource: resource(item), relation: `${access}_consumer`, subject: user(consumer), expiresAt },
        userCheck(consumer, item, access),
      ];
    }
    if (kind < 0.8) {
      const organisation = pick(organisations);
      const subject = { type: 'organization', id: encodeObjectId(organisation), relation: 'member' };
      return [
        { resource: resource(item), relation: 'api_consumer', subject, expiresAt },
        userCheck(pick(members.get(organisation) ?? []), item, 'api'),
      ];
    }
    if (kind < 0.95) {
      const [person, relation] = [pick(users), pick(['editor', 'direct_viewer'])];
      return [
        { resource: resource(item), relation, subject: user(person) },
        userCheck(person, item, 'viewer'),
      ];
    }
    const { organisation, group } = pick(groups);
    const subject = { type: 'group', id: groupObjectId(organisation, group), relation: 'member' };
    return [
      { resource: resource(item), relation: 'direct_viewer', subject },
      { ...userCheck(group, item, 'viewer'), subject_type: 'group', organisation_id: organisation },
    ];
  };
  while (allowedChecks.length < grants) {
    const [relationship, check] = grant();
    if (add(relationship)) allowedChecks.push(check);
  }
  const bodies = Array.from({ length: distinctChecks }, (_, index) =>
    index % 2 === 0
      ? pick(allowedChecks)
      : userCheck(pick(users), pick(items), pick(['api', 'file', 'viewer', 'editor'])),
  );
  return {
    updates,
    checks: bodies.map((body) => ({
      body,
      query: spicedbQuery(registry.canonicalise(body)),
      expected: false,
    })),
  };
}

/**
 * Sets each check's expected answer from SpiceDB at the seeding's revision, then waits until minimize_latency
 * answers the same (its snapshot lags writes by a few seconds), so that `wrong` counts real disagreements.
 */
async function settleExpectations(client: SpiceDBClient, checks: Check[], zedToken: string): Promise<void> {
  const answers = async (consistency: Consistency) => {
    const allowed: boolean[] = [];
    for (let start = 0; start < checks.length; start += 32) {
      const batch = checks.slice(start, start + 32);
      const results = await Promise.all(
        batch.map((check) => client.checkPermission({ ...check.query, consistency })),
      );
      allowed.push(...results.map((result) => result.allowed));
    }
    return allowed;
  };
  (await answers({ atLeastAsFresh: zedToken })).forEach((allowed, index) => {
    (checks[index] as Check).expected = allowed;
  });
  for (let pass = 0; pass < 20; pass++) {
    // Right after the schema was written, minimize_latency checks fail until their snapshot has it.
    const latest = await answers({ minimizeLatency: true }).catch(() => undefined);
    if (latest?.every((allowed, index) => allowed === checks[index]?.expected)) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  throw new Error('minimize_latency checks do not agree with the seeded relationships after 20 passes');
}

function userCheck(subjectId: string, item: string, relation: string): CheckRequestBody {
  return {
    subject_type: 'user',
    subject_id: subjectId,
    resource_type: 'resource',
    resource_id: item,
    relation,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Main: SpiceDB, seed, service, runs, report

interface Summary {
  requests: number;
  p50: number;
  p99: number;
  throughput: number;
  allowedShare: number;
  wrong: number;
  failed: number;
  /** CPU per check of this process (client, and service on the service path) and of SpiceDB, in µs. */
  nodeUs: number;
  spicedbUs: number;
  /** Service path: mean time inside the service, and of its SpiceDB call, in ms. */
  serverMs: number;
  spicedbCallMs: number;
}

function summarise(results: RunResult[]): Summary {
  const latencies = Float64Array.from(results.flatMap((result) => [...result.latenciesMs])).sort();
  const quantile = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const requests = latencies.length;
  const seconds = results.reduce((total, result) => total + result.elapsedMs, 0) / 1000;
  const sum = (
    key: 'allowed' | 'wrong' | 'failed' | 'nodeCpuMs' | 'spicedbCpuMs' | 'serverMs' | 'spicedbCallMs',
  ) => results.reduce((total, result) => total + result[key], 0);
  const perCheckUs = (cpuMs: number) => (cpuMs * 1000) / Math.max(1, requests);
  return {
    requests,
    p50: quantile(0.5),
    p99: quantile(0.99),
    throughput: requests / seconds,
    allowedShare: sum('allowed') / Math.max(1, requests),
    wrong: sum('wrong'),
    failed: sum('failed'),
    nodeUs: perCheckUs(sum('nodeCpuMs')),
    spicedbUs: perCheckUs(sum('spicedbCpuMs')),
    serverMs: sum('serverMs') / Math.max(1, requests),
    spicedbCallMs: sum('spicedbCallMs') / Math.max(1, requests),
  };
}

const OPTIONS = {
  grants: { type: 'string', default: '10000' },
  requests: { type: 'string', default: '20000' },
  seconds: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '1,8,32' },
  rounds: { type: 'string', default: '6' },
  checks: { type: 'string', default: '2000' },
} as const;

async function main(): Promise<void> {
  const options = parseArgs({ options: OPTIONS }).values;
  const [grants, requests, seconds, rounds, distinctChecks] = [
    options.grants,
    options.requests,
    options.seconds,
    options.rounds,
    options.checks,
  ].map(Number) as [number, number, number, number, number];
  const levels = options.concurrency.split(',').map(Number);
  const stateDir = await mkdtemp(join(tmpdir(), 'bench-check-'));
  const stopping: Array<() => Promise<void> | void> = [() => rm(stateDir, { recursive: true, force: true })];
  try {
    const spicedb = await startSpiceDB({
      binary: (await resolveToolPaths()).spicedb,
      stateDir,
      name: 'spicedb-bench',
    });
    stopping.unshift(() => spicedb.process.stop());
    const seeding = new SpiceDBClient({
      endpoint: spicedb.endpoint,
      token: spicedb.token,
      transport: 'plaintext',
    });
    stopping.unshift(() => seeding.close());
    const world = buildWorld(grants, distinctChecks);
    await seeding.ensureSchema(readSchemaText());
    const zedToken = await seeding.writeRelationshipsInBatches(world.updates);
    await settleExpectations(seeding, world.checks, zedToken ?? '');
    console.log(
      `SpiceDB ${spicedb.endpoint}: ${grants} grants, ${world.updates.length} relationships in all`,
    );

    const key = await ensureDevSigningKey(stateDir);
    const bearer = await createJwtVerifier({
      keys: { kind: 'jwks', jwks: key.jwks },
      issuer: DEV_TOKEN_ISSUER,
      audience: DEV_TOKEN_AUDIENCE,
    });
    const metricsRegistry = createMetricsRegistry();
    const service = await startDecisionService({
      metricsRegistry,
      port: 0,
      host: '127.0.0.1',
      spicedb: { endpoint: spicedb.endpoint, token: spicedb.token, transport: 'plaintext' },
      authenticators: { bearer },
      // Production's level; the lines are formatted as in production, then dropped.
      logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
    });
    stopping.unshift(() => service.stop());
    const serviceStarted = performance.now();
    await untilReady(service.url);

    const worker = startLoadWorker({
      checks: world.checks,
      spicedb: { endpoint: spicedb.endpoint, token: spicedb.token },
      checkUrl: `${service.url}/v1/check`,
      authorization: `Bearer ${await mintToken(key, { sub: randomUUID(), roles: [DECISION_CLIENT_ROLE] })}`,
    });
    stopping.unshift(() => worker.postMessage('exit'));
    const run = (request: RunRequest) =>
      new Promise<RunResult>((resolve, reject) => {
        const fail = (error: Error) => reject(error);
        const cpuBefore = { node: process.cpuUsage(), spicedb: processCpuMs(spicedb.process.pid) };
        const timingsBefore = serviceTimings(metricsRegistry);
        worker.once('message', async (result: RunResult) => {
          worker.off('error', fail);
          const { user, system } = process.cpuUsage(cpuBefore.node);
          const spicedbCpuMs = processCpuMs(spicedb.process.pid) - cpuBefore.spicedb;
          const [before, after] = await Promise.all([timingsBefore, serviceTimings(metricsRegistry)]);
          resolve({
            ...result,
            nodeCpuMs: (user + system) / 1000,
            spicedbCpuMs,
            serverMs: after.serverMs - before.serverMs,
            spicedbCallMs: after.spicedbCallMs - before.spicedbCallMs,
          });
        });
        worker.once('error', fail);
        worker.postMessage(request);
      });

    // Warm up both paths (SpiceDB's caches, the JIT, connections) over the whole request mix.
    for (const mode of ['direct', 'service'] as const) {
      await run({ mode, concurrency: 8, requests: world.checks.length * 2, seconds: 10 });
    }
    // For one window after its Watch starts, the revision barrier counts every object as touched (it cannot know
    // what changed just before); nothing changes during the runs, so afterwards the service's checks are
    // minimize_latency like the direct path's.
    const { quantizationMs, marginMs } = DEFAULT_REVISION_BARRIER;
    const startupLeft = serviceStarted + quantizationMs + marginMs - performance.now();
    if (startupLeft > 0) await new Promise((resolve) => setTimeout(resolve, startupLeft));
    const consistencyBefore = await consistencyCounts(metricsRegistry);
    console.log(
      `machine: ${availableParallelism()} cores, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, node ${process.version}`,
    );
    console.log(
      `each run: up to ${requests} requests or ${seconds} s; ${rounds} rounds per mode, alternating order\n`,
    );
    printHeader();
    const machineBefore = machineCpuMs();
    const ownBefore = ownCpuMs(spicedb.process.pid);
    for (const concurrency of levels) {
      const results: Record<Mode, RunResult[]> = { direct: [], service: [] };
      for (let round = 0; round < rounds; round++) {
        const order: Mode[] = round % 2 === 0 ? ['direct', 'service'] : ['service', 'direct'];
        for (const mode of order) results[mode].push(await run({ mode, concurrency, requests, seconds }));
      }
      printLevel(concurrency, summarise(results.direct), summarise(results.service));
    }
    const machine = machineCpuMs();
    const share = (ms: number) => `${((ms / (machine.totalMs - machineBefore.totalMs)) * 100).toFixed(0)}%`;
    const own = ownCpuMs(spicedb.process.pid) - ownBefore;
    const othersMs = machine.busyMs - machineBefore.busyMs - own;
    console.log(
      `CPU of the ${availableParallelism()} cores while measuring: this benchmark (load, service, SpiceDB) ${share(own)}, other processes ${share(othersMs)}, idle ${share(machine.totalMs - machineBefore.totalMs - (machine.busyMs - machineBefore.busyMs))}`,
    );
    const consistency = await consistencyCounts(metricsRegistry);
    console.log(
      `service checks while measuring, by consistency: ${Object.entries(consistency)
        .map(([source, count]) => `${source} ${count - (consistencyBefore[source] ?? 0)}`)
        .join(', ')}`,
    );
  } finally {
    for (const stop of stopping) await stop();
  }
}

/**
 * This file again, in a worker thread. Workers do not inherit tsx's loader (Node 20), so the worker's entry is
 * a line of JavaScript that loads this file through tsx's API.
 */
function startLoadWorker(setup: LoadSetup): Worker {
  const here = JSON.stringify(import.meta.url);
  const entry = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => tsx.tsImport(${here}, ${here}))`;
  return new Worker(entry, { eval: true, workerData: setup });
}

/** Sums of the service's own histograms: time spent inside it on /v1/check, and in its SpiceDB calls. */
async function serviceTimings(
  registry: MetricsRegistry,
): Promise<{ serverMs: number; spicedbCallMs: number }> {
  const sumOf = async (metric: string, matches: (labels: Record<string, unknown>) => boolean) => {
    // A histogram's values carry the series name (`_bucket`, `_sum`, `_count`).
    const values = ((await registry.getSingleMetric(metric)?.get())?.values ??
      []) as MetricValueWithName<string>[];
    return values
      .filter((value) => value.metricName === `${metric}_sum` && matches(value.labels))
      .reduce((total, value) => total + value.value * 1000, 0);
  };
  return {
    serverMs: await sumOf('http_request_duration_seconds', (labels) => labels.route === '/v1/check'),
    spicedbCallMs: await sumOf('authz_check_duration_seconds', () => true),
  };
}

/** decision_check_consistency_total by its label: how the revision barrier had checks evaluated. */
async function consistencyCounts(registry: MetricsRegistry): Promise<Record<string, number>> {
  const values = (await registry.getSingleMetric('decision_check_consistency_total')?.get())?.values ?? [];
  return Object.fromEntries(values.map((value) => [String(value.labels.consistency), value.value]));
}

const CLOCK_TICKS_PER_SECOND = 100;

/** All cores together, from /proc/stat: time in all states, and busy (not idle, not waiting for I/O). */
function machineCpuMs(): { totalMs: number; busyMs: number } {
  const ticks =
    readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.split(/\s+/).slice(1, 9).map(Number) ?? [];
  const total = ticks.reduce((sum, value) => sum + value, 0);
  const busy = total - (ticks[3] ?? 0) - (ticks[4] ?? 0);
  return { totalMs: (total * 1000) / CLOCK_TICKS_PER_SECOND, busyMs: (busy * 1000) / CLOCK_TICKS_PER_SECOND };
}

/** CPU of this process (all its threads) and of SpiceDB. */
function ownCpuMs(spicedbPid: number): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000 + processCpuMs(spicedbPid);
}

/** User and system CPU time of a process from /proc (Linux), in milliseconds; 0 where /proc is missing. */
function processCpuMs(pid: number): number {
  try {
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

async function untilReady(url: string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt++) {
    if ((await fetch(`${url}/healthz/ready`)).status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('decision service not ready after 30 s');
}

const COLUMNS = [
  'in flight',
  'path',
  'requests',
  'p50 ms',
  'p99 ms',
  'checks/s',
  'allowed',
  'wrong',
  'failed',
  'node CPU µs',
  'SpiceDB µs',
  'in svc ms',
  'svc→db ms',
];

function printHeader(): void {
  console.log(COLUMNS.map((column) => column.padStart(12)).join(''));
}

function printLevel(concurrency: number, direct: Summary, service: Summary): void {
  const row = (path: string, s: Summary) =>
    [
      concurrency,
      path,
      s.requests,
      s.p50.toFixed(3),
      s.p99.toFixed(3),
      s.throughput.toFixed(0),
      `${(s.allowedShare * 100).toFixed(0)}%`,
      s.wrong,
      s.failed,
      s.nodeUs.toFixed(0),
      s.spicedbUs.toFixed(0),
      s.serverMs ? s.serverMs.toFixed(3) : '',
      s.spicedbCallMs ? s.spicedbCallMs.toFixed(3) : '',
    ]
      .map((cell) => String(cell).padStart(12))
      .join('');
  console.log(row('direct', direct));
  console.log(row('service', service));
  const p50 = service.p50 / direct.p50;
  const throughput = service.throughput / direct.throughput;
  const verdict =
    concurrency === 32
      ? `  target p50 <= 1.3: ${p50 <= 1.3 ? 'met' : 'MISSED'}, throughput >= 0.8: ${throughput >= 0.8 ? 'met' : 'MISSED'}`
      : '';
  const ratios = [
    '',
    'ratio',
    '',
    p50.toFixed(2),
    (service.p99 / direct.p99).toFixed(2),
    throughput.toFixed(2),
  ];
  console.log(`${ratios.map((cell) => cell.padStart(12)).join('')}${verdict}\n`);
}

if (isMainThread) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
