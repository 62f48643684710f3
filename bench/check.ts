// npm run bench:check [-- --grants 10000 --requests 20000 --seconds 3 --concurrency 16,32 --rounds 6
//                        --workloads unique,repeated --batching on --zipf 1 --repeated-users 2000
//                        --repeated-items 1000 --random-share 0.15 --http-client undici --runtime compiled
//                        --peer openfga]
//
// Direct CheckPermission through the SpiceDB client against POST /v1/check through the decision service:
// one SpiceDB of its own (memory datastore, loopback), the same relationships, the same request mix. The peer, an
// OpenFGA of its own (memory datastore, loopback; `--peer none` leaves it out), answers the same checks from the
// same relationships as tuples, through the same HTTP client (bench/support/openfga-peer.ts). The
// decision service runs in this process, as the dev stack runs it, compiled as the image runs it (`--runtime tsx`:
// from the sources); the load runs in a worker thread for every path, so that the client's work is never the
// service's, and the rounds alternate the paths' order. Two workloads: `unique` (no check repeats within the
// decision cache's lifetimes) and `repeated` (Zipf-distributed subjects and items, mostly a user's own grants,
// 10% writes).
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { Pool } from 'undici';
import type { MetricValueWithName, Registry as MetricsRegistry } from 'prom-client';
import { mintToken } from '../dev/tokens/dev-token.js';
import { DEFAULT_CHECK_BATCH } from '../src/decision/check-batcher.js';
import { spicedbQuery } from '../src/decision/check-evaluator.js';
import { canonicalCheck } from '../src/decision/canonical-check.js';
import { checkRequestOfBody } from '../src/decision/check-request.js';
import type { CheckRequestBody } from '../src/decision/check-request.js';
import { DECISION_CLIENT_ROLE } from '../src/config/decision-clients.js';
import { decisionRequestLimits } from '../src/config/rate-limit-config.js';
import { startDecisionService } from '../src/decision/decision-service.js';
import { DEFAULT_REVISION_BARRIER } from '../src/decision/revision-barrier.js';
import { createMetricsRegistry } from '../src/observability/metrics.js';
import { SpiceDBClient } from '../src/spicedb/client.js';
import type { CheckPermissionInput, Consistency, RelationshipUpdate } from '../src/spicedb/client.js';
import { encodeObjectId, groupObjectId } from '../src/spicedb/object-id.js';
import { loadRegistry } from '../src/spicedb/registry.js';
import { startBenchSpiceDB } from './support/bench-spicedb.js';
import { devBearer } from './support/dev-bearer.js';
import { parseNodeRuntime, runCompiled, runsFromSource } from './support/node-runtime.js';
import { machineCpuMs, processCpuMs } from './support/process-cpu.js';
import { sleep } from '../dev/wait/sleep.js';
import { until } from '../dev/wait/until.js';
import { CHECK_STAGES, startCpuProfile, timeByStage } from './support/cpu-profile.js';
import { printTable } from './support/markdown-table.js';
import {
  allowedInAnswer,
  checkBody,
  checkPath,
  startOpenFGA,
  writeBody,
  writePath,
  writeTuples,
  type OpenFGAStore,
} from './support/openfga-peer.js';

type Mode = 'direct' | 'service' | 'openfga';
type Workload = 'unique' | 'repeated';

interface Check {
  body: CheckRequestBody;
  query: CheckPermissionInput;
  /** Whether the seeded relationships allow it; every path must agree with it. */
  expected: boolean;
}

interface RunRequest {
  mode: Mode;
  /** `warm-up`: distinct checks of their own, apart from the unique workload's. */
  workload: Workload | 'warm-up';
  concurrency: number;
  requests: number;
  seconds: number;
}

interface RunResult {
  latenciesMs: Float64Array;
  elapsedMs: number;
  /** CPU time of this process (load generator and, for the service path, the service), of SpiceDB and OpenFGA. */
  nodeCpuMs: number;
  /** CPU time of the main thread: the service's (the load runs in a worker). */
  serviceCpuMs: number;
  spicedbCpuMs: number;
  openfgaCpuMs: number;
  /** Service path: time inside the service (arrival to response end) and its SpiceDB calls, summed. */
  serverMs: number;
  spicedbCallMs: number;
  allowed: number;
  wrong: number;
  failed: number;
  /** Repeated workload: relationships written (touched or deleted) while it ran. */
  writes: number;
}

interface LoadSetup {
  checks: Check[];
  warmUpChecks: Check[];
  /** The repeated workload's users and items, most popular first. */
  population: { users: string[]; items: string[] };
  /** The seeded individual grants (user, item, access type): most of the repeated workload's checks. */
  grants: Grant[];
  /** The exponent s of the repeated workload's Zipf distributions: the k-th most popular has weight 1/k^s. */
  zipfExponent: number;
  /** The repeated workload's share of checks of any user on any item (mostly denies), not of a grant. */
  randomShare: number;
  /** The load generator's HTTP client for the service path. */
  httpClient: HttpClient;
  spicedb: { endpoint: string; token: string };
  checkUrl: string;
  authorization: string;
  /** The peer's store, when the run measures OpenFGA. */
  openfga: OpenFGAStore | undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Load generator (worker thread)

type Send = (check: CheckOperation) => Promise<boolean>;

/** Where each path sends its checks, and where its writes go (the direct and service paths share SpiceDB). */
interface Paths {
  sends: Record<Mode, Send>;
  writes: Record<Mode, (update: RelationshipUpdate) => Promise<unknown>>;
  close: () => Promise<void>;
}

function loadPaths(setup: LoadSetup): Paths {
  const client = new SpiceDBClient({ ...setup.spicedb, transport: 'plaintext' });
  const url = new URL(setup.checkUrl);
  const service = httpPoster(url.origin, { authorization: setup.authorization }, setup.httpClient);
  const peer = setup.openfga && openfgaPath(setup.openfga, setup.httpClient);
  const toSpiceDB = (update: RelationshipUpdate) => client.writeRelationships([update]);
  const unmeasured = () => Promise.reject(new Error('OpenFGA is not measured in this run (--peer none)'));
  return {
    sends: {
      direct: async (check) => (await client.checkPermission(check.query)).allowed,
      service: async (check) => allowedIn(await service.post(url.pathname, check.body)),
      openfga: peer?.send ?? unmeasured,
    },
    writes: { direct: toSpiceDB, service: toSpiceDB, openfga: peer?.write ?? unmeasured },
    close: async () => {
      client.close();
      await Promise.all([service.close(), peer?.close()]);
    },
  };
}

/** OpenFGA's HTTP check and write, through the same kind of pool as the service's. */
function openfgaPath(store: OpenFGAStore, httpClient: HttpClient) {
  const poster = httpPoster(store.url, {}, httpClient);
  return {
    send: async (check: CheckOperation) =>
      allowedInAnswer(
        await poster.post(checkPath(store), check.openfgaBody ?? checkBody(store, check.query)),
      ),
    write: (update: RelationshipUpdate) => poster.post(writePath(store), writeBody(store, [update])),
    close: () => poster.close(),
  };
}

function runLoadWorker(setup: LoadSetup): void {
  const paths = loadPaths(setup);
  const unique = uniqueWorkload(setup.checks, setup.openfga);
  const warmUp = uniqueWorkload(setup.warmUpChecks, setup.openfga);
  const repeated = repeatedWorkload(setup, paths.writes);

  parentPort?.on('message', async (run: RunRequest | 'exit') => {
    if (run === 'exit') {
      await paths.close();
      parentPort?.close();
      return;
    }
    const operations = (run.workload === 'repeated' ? repeated : run.workload === 'unique' ? unique : warmUp)(
      run.mode,
    );
    parentPort?.postMessage(await load(paths.sends[run.mode], operations, run));
  });
}

type HttpClient = 'undici' | 'node';

/** At least the most requests in flight: every loop keeps its keep-alive connection. */
const MAX_CONNECTIONS = 64;

interface HttpPoster {
  /** The answer's body; a status other than 200 fails. */
  post: (path: string, body: Buffer) => Promise<Buffer>;
  close: () => Promise<void>;
}

/**
 * JSON POSTs to `origin` with a keep-alive pool: undici's (the engine of Node's fetch, a data-path client's
 * choice, and the cheaper in CPU per request) or node's http.request with a keep-alive Agent.
 */
function httpPoster(
  origin: string,
  extraHeaders: Record<string, string>,
  httpClient: HttpClient,
): HttpPoster {
  const headers = { ...extraHeaders, 'content-type': 'application/json' };
  if (httpClient === 'undici') {
    const pool = new Pool(origin, { connections: MAX_CONNECTIONS, pipelining: 1 });
    const post = async (path: string, body: Buffer) => {
      const response = await pool.request({ path, method: 'POST', headers, body });
      const answer = Buffer.from(await response.body.arrayBuffer());
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
      return answer;
    };
    return { post, close: () => pool.close() };
  }
  const url = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_CONNECTIONS });
  const post = (path: string, body: Buffer) =>
    new Promise<Buffer>((resolve, reject) => {
      const request = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path,
          method: 'POST',
          headers: { ...headers, 'content-length': body.length },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            if (response.statusCode === 200) resolve(Buffer.concat(chunks));
            else reject(new Error(`status ${response.statusCode}`));
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  return { post, close: async () => agent.destroy() };
}

function allowedIn(answer: Buffer): boolean {
  return (JSON.parse(answer.toString()) as { result: { allowed: boolean } }).result.allowed;
}

/**
 * A check as each path sends it (the service's body, the SpiceDB query, OpenFGA's body when it is measured), and
 * the answer the seeded relationships give, when known.
 */
interface CheckOperation {
  kind: 'check';
  body: Buffer;
  query: CheckPermissionInput;
  openfgaBody: Buffer | undefined;
  expected: boolean | undefined;
}

/** One step of a workload: a check or a write. */
type Operation = CheckOperation | { kind: 'write'; write: () => Promise<unknown> };

function checkOperation(
  body: CheckRequestBody,
  query: CheckPermissionInput,
  expected: boolean | undefined,
  store: OpenFGAStore | undefined,
): CheckOperation {
  const openfgaBody = store && checkBody(store, query);
  return { kind: 'check', body: Buffer.from(JSON.stringify(body)), query, openfgaBody, expected };
}

/**
 * Each mode walks the distinct checks from where its last run stopped, so that no check repeats within a run,
 * nor within the whole workload when its runs take at most `uniqueRunRequests` each.
 */
function uniqueWorkload(checks: Check[], store: OpenFGAStore | undefined): (mode: Mode) => () => Operation {
  const operations = checks.map((check) => checkOperation(check.body, check.query, check.expected, store));
  const cursors: Record<Mode, number> = { direct: 0, service: 0, openfga: 0 };
  return (mode) => () => operations[cursors[mode]++ % operations.length] as CheckOperation;
}

const REPEATED_WRITE_SHARE = 0.1;

/** Distinct checks of the warm-up, apart from the unique workload's: a warmed check would be remembered. */
const WARM_UP_CHECKS = 2_000;

/**
 * Requests of each unique run: at most the mix over the runs of both levels, so that the service never sees a
 * unique check twice (the decision cache remembers an allow up to a minute, longer than the whole workload).
 */
function uniqueRunRequests(requests: number, mix: number, runs: number): number {
  return Math.min(requests, Math.floor(mix / runs));
}

/** A user's grant of one access type on one item: what a consumer on a data path checks again and again. */
interface Grant {
  user: string;
  item: string;
  access: string;
}

/** One step of the repeated workload, before it becomes a request: a check or a write of a pair. */
type Draw = { kind: 'check'; pair: Grant } | { kind: 'write'; pair: Grant; operation: 'touch' | 'delete' };

/**
 * The repeated workload's sequence, the same seed in every run so that every path sees it. A check's pair is,
 * with probability `randomShare`, an `api` check of a user and an item each drawn from a Zipf distribution over
 * all of them (the k-th most popular with weight 1/k^s: mostly denies), otherwise one of the seeded individual
 * grants: a user drawn Zipf among the users holding one, then one of that user's grants, Zipf by the item's
 * popularity (an enforcement point re-checking what its consumers are entitled to). One operation in ten is a
 * write instead: it grants or revokes a pair drawn the same way.
 */
function repeatedDraws({ population, grants, zipfExponent, randomShare }: LoadSetup): () => () => Draw {
  const zipfOf = memoised((size: number) => zipf(size, zipfExponent));
  const itemRank = new Map(population.items.map((item, rank) => [item, rank]));
  const grantsOf = new Map<string, Grant[]>();
  for (const grant of grants) {
    if (!itemRank.has(grant.item)) continue;
    grantsOf.set(grant.user, [...(grantsOf.get(grant.user) ?? []), grant]);
  }
  for (const held of grantsOf.values())
    held.sort((a, b) => (itemRank.get(a.item) ?? 0) - (itemRank.get(b.item) ?? 0));
  const holders = population.users.filter((user) => grantsOf.has(user));
  const pick = <T>(from: readonly T[], u: number): T => from[zipfOf(from.length)(u)] as T;
  return () => {
    const random = seededRandom(7);
    const pair = (): Grant => {
      if (holders.length === 0 || random() < randomShare) {
        return {
          user: pick(population.users, random()),
          item: pick(population.items, random()),
          access: 'api',
        };
      }
      return pick(grantsOf.get(pick(holders, random())) ?? [], random());
    };
    return () => {
      if (random() >= REPEATED_WRITE_SHARE) return { kind: 'check', pair: pair() };
      return { kind: 'write', pair: pair(), operation: random() < 0.5 ? 'touch' : 'delete' };
    };
  };
}

/**
 * The repeated workload's operations: its draws as check requests (one body per pair) and writes, to the store
 * of the mode that runs it. SpiceDB's grants expire a day later, OpenFGA's never: the same within the run.
 */
function repeatedWorkload(setup: LoadSetup, writes: Paths['writes']): (mode: Mode) => () => Operation {
  const registry = loadRegistry();
  const draws = repeatedDraws(setup);
  const checkOf = memoised((key: string): CheckOperation => {
    const [user, item, access] = key.split(' ') as [string, string, string];
    const body = userCheck(user, item, access);
    const query = spicedbQuery(canonicalCheck(registry, checkRequestOfBody(body)));
    return checkOperation(body, query, undefined, setup.openfga);
  });
  const expiresAt = new Date(Date.now() + 86_400_000);
  return (mode) => {
    const next = draws();
    return () => {
      const draw = next();
      const check = checkOf(pairKey(draw.pair));
      if (draw.kind === 'check') return check;
      const { resource, permission, subject } = check.query;
      const relationship = { resource, relation: permission, subject };
      const { operation } = draw;
      const expiring = operation === 'touch' && mode !== 'openfga';
      const update = { operation, relationship: expiring ? { ...relationship, expiresAt } : relationship };
      return { kind: 'write', write: () => writes[mode](update) };
    };
  };
}

function pairKey({ user, item, access }: Grant): string {
  return `${user} ${item} ${access}`;
}

/** The repeated workload's shape over its first `count` operations: checks, distinct pairs, on granted pairs. */
function repeatedShape(
  setup: LoadSetup,
  count: number,
): { checks: number; distinct: number; granted: number } {
  const granted = new Set(setup.grants.map(pairKey));
  const next = repeatedDraws(setup)();
  const seen = new Set<string>();
  let [checks, onGrants] = [0, 0];
  for (let index = 0; index < count; index++) {
    const draw = next();
    if (draw.kind !== 'check') continue;
    const key = pairKey(draw.pair);
    checks++;
    seen.add(key);
    if (granted.has(key)) onGrants++;
  }
  return { checks, distinct: seen.size, granted: onGrants };
}

function memoised<K, V>(make: (key: K) => V): (key: K) => V {
  const made = new Map<K, V>();
  return (key) => {
    let value = made.get(key);
    if (value === undefined) made.set(key, (value = make(key)));
    return value;
  };
}

/** Draws an index below `size` from uniform `u` in [0, 1): index k with weight 1 / (k + 1)^exponent. */
function zipf(size: number, exponent: number): (u: number) => number {
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let k = 0; k < size; k++) cumulative[k] = total += 1 / (k + 1) ** exponent;
  return (u) => {
    const target = u * total;
    let [low, high] = [0, size - 1];
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] as number) < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

/** `concurrency` loops, each with one operation in flight, until `requests` are done or time is up. */
async function load(send: Send, next: () => Operation, run: RunRequest): Promise<RunResult> {
  const latenciesMs = new Float64Array(run.requests);
  const result = { allowed: 0, wrong: 0, failed: 0, writes: 0 };
  let started = 0;
  let done = 0;
  const began = performance.now();
  const stopAt = began + run.seconds * 1000;
  const loop = async () => {
    while (started < run.requests && performance.now() < stopAt) {
      started++;
      const operation = next();
      try {
        if (operation.kind === 'write') {
          await operation.write();
          result.writes++;
          continue;
        }
        const sent = performance.now();
        const allowed = await send(operation);
        latenciesMs[done++] = performance.now() - sent;
        if (allowed) result.allowed++;
        if (operation.expected !== undefined && allowed !== operation.expected) result.wrong++;
      } catch {
        result.failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: run.concurrency }, loop));
  return {
    latenciesMs: latenciesMs.slice(0, done),
    elapsedMs: performance.now() - began,
    nodeCpuMs: 0,
    serviceCpuMs: 0,
    spicedbCpuMs: 0,
    openfgaCpuMs: 0,
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

interface Dataset {
  updates: RelationshipUpdate[];
  population: LoadSetup['population'];
  grants: Grant[];
  checks: Check[];
}

/**
 * `grants` relationships shaped like production: individual grants of the three access types (70%),
 * organisation grants (10%), editors and viewers (15%, some of them groups), plus organisation and group
 * memberships. Half of the checks are ones the relationships allow, half random ones that they deny; no two
 * alike.
 */
function buildDataset(grants: number, distinctChecks: number): Dataset {
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
  const grantsToUsers: Grant[] = [];
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
    if (!add(relationship)) continue;
    allowedChecks.push(check);
    if (relationship.relation.endsWith('_consumer') && relationship.subject.type === 'user') {
      grantsToUsers.push({ user: check.subject_id, item: check.resource_id, access: check.relation });
    }
  }
  const bodies = distinct(distinctChecks, (index) =>
    index % 2 === 0
      ? pick(allowedChecks)
      : userCheck(pick(users), pick(items), pick(['api', 'file', 'viewer', 'editor'])),
  );
  return {
    updates,
    population: { users, items },
    grants: grantsToUsers,
    checks: bodies.map((body) => ({
      body,
      query: spicedbQuery(canonicalCheck(registry, checkRequestOfBody(body))),
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
      const results = await patiently(() =>
        Promise.all(batch.map((check) => client.checkPermission({ ...check.query, consistency }))),
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
    await sleep(1_000);
  }
  throw new Error('minimize_latency checks do not agree with the seeded relationships after 20 passes');
}

/** `count` different checks drawn by `draw(index)` (at most ten attempts per check). */
function distinct(count: number, draw: (index: number) => CheckRequestBody): CheckRequestBody[] {
  const drawn = new Map<string, CheckRequestBody>();
  for (let attempt = 0; drawn.size < count && attempt < count * 10; attempt++) {
    const body = draw(drawn.size);
    drawn.set(JSON.stringify(body), body);
  }
  return [...drawn.values()];
}

/** `attempt`, again after a second when it fails (a deadline on a loaded machine), up to five times. */
async function patiently<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (tries === 5) throw error;
      await sleep(1_000);
    }
  }
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
  writes: number;
  /** CPU per check of this process (client, and service on the service path) and of SpiceDB, in µs. */
  nodeUs: number;
  /** CPU per check of the service's thread, in µs. */
  serviceUs: number;
  spicedbUs: number;
  openfgaUs: number;
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
    key:
      | 'allowed'
      | 'wrong'
      | 'failed'
      | 'writes'
      | 'nodeCpuMs'
      | 'serviceCpuMs'
      | 'spicedbCpuMs'
      | 'openfgaCpuMs'
      | 'serverMs'
      | 'spicedbCallMs',
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
    writes: sum('writes'),
    nodeUs: perCheckUs(sum('nodeCpuMs')),
    serviceUs: perCheckUs(sum('serviceCpuMs')),
    spicedbUs: perCheckUs(sum('spicedbCpuMs')),
    openfgaUs: perCheckUs(sum('openfgaCpuMs')),
    serverMs: sum('serverMs') / Math.max(1, requests),
    spicedbCallMs: sum('spicedbCallMs') / Math.max(1, requests),
  };
}

const OPTIONS = {
  grants: { type: 'string', default: '10000' },
  requests: { type: 'string', default: '20000' },
  seconds: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '16,32' },
  workloads: { type: 'string', default: 'unique,repeated' },
  rounds: { type: 'string', default: '6' },
  /** Distinct checks of the unique workload (besides the warm-up's). */
  checks: { type: 'string', default: '12000' },
  /** `compiled` (the JavaScript tsc emits, as the image runs it) or `tsx` (the sources through tsx's loader). */
  runtime: { type: 'string', default: 'compiled' },
  /** The service's check batching (CHECK_BATCHING): `on` (its default) or `off`. */
  batching: { type: 'string', default: 'on' },
  /** The service's SpiceDB calls in flight for batched checks (CHECK_BATCH_CONCURRENCY); empty: its default. */
  'batch-calls': { type: 'string', default: '' },
  /** The repeated workload: its Zipf exponent, and how many users and items it draws from (empty: all). */
  zipf: { type: 'string', default: '1' },
  'repeated-users': { type: 'string', default: '' },
  'repeated-items': { type: 'string', default: '' },
  /** The repeated workload's share of checks of any user on any item, not of a grant (1: the shape before). */
  'random-share': { type: 'string', default: '0.15' },
  /** The load generator's HTTP client on the service path: `undici` or `node` (http.request). */
  'http-client': { type: 'string', default: 'undici' },
  /** A folder: a CPU profile of the service's thread per workload, and its time by stage of a check. */
  profile: { type: 'string', default: '' },
  /** `openfga`: OpenFGA measured in the same run as the peer (built on demand); `none`: the two paths alone. */
  peer: { type: 'string', default: 'openfga' },
} as const;

const WORKLOADS: readonly Workload[] = ['unique', 'repeated'];

/** Operations of the repeated workload its shape is described over: about one run's worth. */
const SHAPE_SAMPLE = 10_000;

function describeWorkload(workload: Workload, setup: LoadSetup): string {
  if (workload === 'unique') {
    return 'distinct checks, half allowed, no check repeated within the decision cache lifetimes; targets p50 <= 1.1, throughput >= 0.9';
  }
  const { population, grants, zipfExponent, randomShare } = setup;
  const shape = repeatedShape(setup, SHAPE_SAMPLE);
  const percent = (share: number) => `${(share * 100).toFixed(0)}%`;
  return [
    `checks of Zipf-distributed (s = ${zipfExponent}) subjects and items: ${percent(1 - randomShare)} of a user's grant (${grants.length} grants, users and items by popularity), ${percent(randomShare)} api checks of any user (${population.users.length}) on any item (${population.items.length}); ${percent(REPEATED_WRITE_SHARE)} writes (grant or revoke a pair drawn the same way); targets p50 <= 0.5, throughput >= 2`,
    `  shape of its first ${SHAPE_SAMPLE} operations: ${shape.checks} checks of ${shape.distinct} distinct pairs, ${percent(shape.granted / shape.checks)} of them on a seeded grant`,
  ].join('\n');
}

/** The first `count` (the most popular; all when empty). */
function mostPopular(all: string[], count: string): string[] {
  return count === '' ? all : all.slice(0, Number(count));
}

const TARGETS: Record<Workload, { p50: number; throughput: number }> = {
  unique: { p50: 1.1, throughput: 0.9 },
  repeated: { p50: 0.5, throughput: 2 },
};

/** The service's throughput over OpenFGA's that each workload should reach. */
const PEER_GOALS: Record<Workload, number> = { unique: 0.8, repeated: 1.5 };

interface PeerGoal {
  workload: Workload;
  concurrency: number;
  /** The service's throughput over OpenFGA's. */
  ratio: number;
}

function peerGoal(workload: Workload, concurrency: number, service: Summary, openfga: Summary): PeerGoal {
  return { workload, concurrency, ratio: service.throughput / openfga.throughput };
}

function printPeerGoals(goals: PeerGoal[]): void {
  printTable(
    ['workload', 'in flight', 'service / OpenFGA throughput', 'goal', 'met'],
    goals.map(({ workload, concurrency, ratio }) => [
      workload,
      String(concurrency),
      ratio.toFixed(2),
      `>= ${PEER_GOALS[workload]}`,
      ratio >= PEER_GOALS[workload] ? 'met' : 'unmet',
    ]),
  );
}

async function main(): Promise<void> {
  const options = parseArgs({ options: OPTIONS }).values;
  if (await runCompiled(import.meta.url, parseNodeRuntime(options.runtime))) return;
  const [grants, requests, seconds, rounds, distinctChecks] = [
    options.grants,
    options.requests,
    options.seconds,
    options.rounds,
    options.checks,
  ].map(Number) as [number, number, number, number, number];
  const levels = options.concurrency.split(',').map(Number);
  const workloads = options.workloads.split(',');
  if (!['on', 'off'].includes(options.batching)) throw new Error('--batching is on or off');
  const checkBatch = {
    ...DEFAULT_CHECK_BATCH,
    enabled: options.batching === 'on',
    ...(options['batch-calls'] === '' ? {} : { concurrency: Number(options['batch-calls']) }),
  };
  const httpClient = options['http-client'];
  if (httpClient !== 'undici' && httpClient !== 'node') throw new Error('--http-client is undici or node');
  if (options.peer !== 'openfga' && options.peer !== 'none') throw new Error('--peer is openfga or none');
  const stateDir = await mkdtemp(join(tmpdir(), 'bench-check-'));
  const stopping: Array<() => Promise<void> | void> = [() => rm(stateDir, { recursive: true, force: true })];
  try {
    const { server: spicedb, client: seeding } = await startBenchSpiceDB(stateDir);
    stopping.unshift(() => spicedb.process.stop());
    stopping.unshift(() => seeding.close());
    const dataset = buildDataset(grants, distinctChecks + WARM_UP_CHECKS);
    const zedToken = await seeding.writeRelationshipsInBatches(dataset.updates);
    await settleExpectations(seeding, dataset.checks, zedToken ?? '');
    console.log(
      `SpiceDB ${spicedb.endpoint}: ${grants} grants, ${dataset.updates.length} relationships in all`,
    );
    const openfga = options.peer === 'openfga' ? await startOpenFGA(stateDir) : undefined;
    if (openfga) {
      stopping.unshift(() => openfga.process.stop());
      await writeTuples(openfga.store, dataset.updates);
      console.log(`OpenFGA ${openfga.store.url}: the same ${dataset.updates.length} relationships as tuples`);
    }
    const modes: Mode[] = openfga ? ['direct', 'service', 'openfga'] : ['direct', 'service'];
    const openfgaCpuMs = () => (openfga ? processCpuMs(openfga.process.pid) : 0);

    const { key, bearer } = await devBearer(stateDir);
    const metricsRegistry = createMetricsRegistry();
    const service = await startDecisionService(
      {
        port: 0,
        host: '127.0.0.1',
        spicedb: { endpoint: spicedb.endpoint, token: spicedb.token, transport: 'plaintext' },
        checkBatch,
        // The limits as shipped, the check class's raised past what one subject sends here: each check pays them.
        limits: decisionRequestLimits({ RATE_LIMIT_CHECK: `${UNREACHED_CHECK_LIMIT}/1m` }),
      },
      {
        metricsRegistry,
        authenticators: { bearer },
        // Production's level; the lines are formatted as in production, then dropped.
        logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
      },
    );
    stopping.unshift(() => service.stop());
    const serviceStarted = performance.now();
    await untilReady(service.url);

    const setup: LoadSetup = {
      checks: dataset.checks.slice(WARM_UP_CHECKS),
      warmUpChecks: dataset.checks.slice(0, WARM_UP_CHECKS),
      population: {
        users: mostPopular(dataset.population.users, options['repeated-users']),
        items: mostPopular(dataset.population.items, options['repeated-items']),
      },
      grants: dataset.grants,
      zipfExponent: Number(options.zipf),
      randomShare: Number(options['random-share']),
      httpClient,
      spicedb: { endpoint: spicedb.endpoint, token: spicedb.token },
      checkUrl: `${service.url}/v1/check`,
      authorization: `Bearer ${await mintToken(key, { sub: randomUUID(), roles: [DECISION_CLIENT_ROLE] })}`,
      openfga: openfga?.store,
    };
    const worker = startLoadWorker(setup);
    stopping.unshift(() => worker.postMessage('exit'));
    const run = (request: RunRequest) =>
      new Promise<RunResult>((resolve, reject) => {
        const fail = (error: Error) => reject(error);
        const cpuBefore = {
          node: process.cpuUsage(),
          service: process.threadCpuUsage(),
          spicedb: processCpuMs(spicedb.process.pid),
          openfga: openfgaCpuMs(),
        };
        const timingsBefore = serviceTimings(metricsRegistry);
        worker.once('message', async (result: RunResult) => {
          worker.off('error', fail);
          const { user, system } = process.cpuUsage(cpuBefore.node);
          const service = process.threadCpuUsage(cpuBefore.service);
          const spicedbCpuMs = processCpuMs(spicedb.process.pid) - cpuBefore.spicedb;
          const peerCpuMs = openfgaCpuMs() - cpuBefore.openfga;
          const [before, after] = await Promise.all([timingsBefore, serviceTimings(metricsRegistry)]);
          resolve({
            ...result,
            nodeCpuMs: (user + system) / 1000,
            serviceCpuMs: (service.user + service.system) / 1000,
            spicedbCpuMs,
            openfgaCpuMs: peerCpuMs,
            serverMs: after.serverMs - before.serverMs,
            spicedbCallMs: after.spicedbCallMs - before.spicedbCallMs,
          });
        });
        worker.once('error', fail);
        worker.postMessage(request);
      });

    // Warm up every path (the JIT, connections, SpiceDB's and OpenFGA's runtimes) on checks of their own.
    for (const mode of modes) {
      await run({ mode, workload: 'warm-up', concurrency: 8, requests: WARM_UP_CHECKS * 5, seconds: 10 });
    }
    const uniqueRequests = uniqueRunRequests(requests, setup.checks.length, levels.length * rounds);
    // For one window after its Watch starts, the revision barrier counts every object as touched (it cannot know
    // what changed just before); nothing changes during the unique runs, so afterwards the service's checks are
    // minimize_latency like the direct path's.
    const { quantizationMs, marginMs } = DEFAULT_REVISION_BARRIER;
    const startupLeft = serviceStarted + quantizationMs + marginMs - performance.now();
    if (startupLeft > 0) await sleep(startupLeft);
    console.log(
      `machine: ${availableParallelism()} cores, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, node ${process.version}`,
    );
    console.log(
      `service: check batching ${checkBatch.enabled ? `on (at most ${checkBatch.maxItems} checks a call, ${checkBatch.concurrency} calls in flight)` : 'off'}`,
    );
    console.log(
      `load generator: ${httpClient === 'undici' ? 'undici Pool' : "node's http.request with a keep-alive Agent"} to the service${openfga ? ' and to OpenFGA (HTTP check, MINIMIZE_LATENCY)' : ''}, SpiceDBClient (gRPC) direct`,
    );
    console.log(
      `each run: up to ${requests} requests (unique: ${uniqueRequests}, so that none of its ${setup.checks.length} checks repeats) or ${seconds} s; ${rounds} rounds per mode, alternating order\n`,
    );
    const machineBefore = machineCpuMs();
    const ownCpuMs = () => thisProcessCpuMs() + processCpuMs(spicedb.process.pid) + openfgaCpuMs();
    const ownBefore = ownCpuMs();
    const peerGoals: PeerGoal[] = [];
    // The repeated workload writes: the unique one, whose answers are known in advance, goes first.
    for (const workload of WORKLOADS.filter((name) => workloads.includes(name))) {
      console.log(`workload ${workload}: ${describeWorkload(workload, setup)}`);
      printHeader();
      const countsBefore = await serviceCounts(metricsRegistry);
      const stopProfile = options.profile === '' ? undefined : await startCpuProfile();
      let serviceChecks = 0;
      for (const concurrency of levels) {
        const results: Record<Mode, RunResult[]> = { direct: [], service: [], openfga: [] };
        for (let round = 0; round < rounds; round++) {
          const order = round % 2 === 0 ? modes : modes.toReversed();
          for (const mode of order) {
            const cap = workload === 'unique' ? uniqueRequests : requests;
            results[mode].push(await run({ mode, workload, concurrency, requests: cap, seconds }));
          }
        }
        const service = summarise(results.service);
        serviceChecks += service.requests;
        const peer = openfga ? summarise(results.openfga) : undefined;
        printLevel(workload, concurrency, summarise(results.direct), service, peer);
        if (peer) peerGoals.push(peerGoal(workload, concurrency, service, peer));
      }
      printCounts(countsBefore, await serviceCounts(metricsRegistry));
      if (stopProfile) await reportProfile(await stopProfile(), options.profile, workload, serviceChecks);
    }
    const machine = machineCpuMs();
    const share = (ms: number) => `${((ms / (machine.totalMs - machineBefore.totalMs)) * 100).toFixed(0)}%`;
    const own = ownCpuMs() - ownBefore;
    const othersMs = machine.busyMs - machineBefore.busyMs - own;
    console.log(
      `CPU of the ${availableParallelism()} cores while measuring: this benchmark (load, service, SpiceDB${openfga ? ', OpenFGA' : ''}) ${share(own)}, other processes ${share(othersMs)}, idle ${share(machine.totalMs - machineBefore.totalMs - (machine.busyMs - machineBefore.busyMs))}`,
    );
    if (openfga) printPeerGoals(peerGoals);
  } finally {
    for (const stop of stopping) await stop();
  }
}

/**
 * This file again, in a worker thread. Workers do not inherit tsx's loader, so from the sources the
 * worker's entry is a line of JavaScript that loads this file through tsx's API.
 */
function startLoadWorker(setup: LoadSetup): Worker {
  if (!runsFromSource(import.meta.url)) return new Worker(new URL(import.meta.url), { workerData: setup });
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
    serverMs: await sumOf(
      'policygrant_http_request_duration_seconds',
      (labels) => labels.route === '/v1/check',
    ),
    spicedbCallMs: await sumOf('policygrant_decision_check_duration_seconds', () => true),
  };
}

type Counts = Record<'consistency' | 'cache' | 'batches', Record<string, number>>;

/**
 * How the service answered: by consistency (revision barrier), by decision cache outcome, and the SpiceDB calls
 * of its check batcher (`count`) for how many checks (`sum`).
 */
async function serviceCounts(registry: MetricsRegistry): Promise<Counts> {
  const byLabel = async (metric: string, label: string) => {
    const values = ((await registry.getSingleMetric(metric)?.get())?.values ??
      []) as MetricValueWithName<string>[];
    return Object.fromEntries(
      values.map((value) => [
        String(value.labels[label] ?? value.metricName?.replace(`${metric}_`, '')),
        value.value,
      ]),
    );
  };
  return {
    consistency: await byLabel('policygrant_decision_check_consistency_total', 'consistency'),
    cache: await byLabel('policygrant_decision_cache_lookups_total', 'outcome'),
    batches: await byLabel('policygrant_decision_check_batch_size', 'le'),
  };
}

function printCounts(before: Counts, after: Counts): void {
  const delta = (kind: keyof Counts, label: string) => (after[kind][label] ?? 0) - (before[kind][label] ?? 0);
  const line = (kind: keyof Counts) =>
    Object.keys(after[kind])
      .map((label) => `${label} ${delta(kind, label)}`)
      .join(', ');
  const [calls, checks] = [delta('batches', 'count'), delta('batches', 'sum')];
  const batching = calls
    ? `; batcher: ${checks} checks in ${calls} SpiceDB calls (${(checks / calls).toFixed(1)} a call)`
    : '';
  console.log(
    `service checks, by consistency: ${line('consistency')}; by decision cache: ${line('cache')}${batching}\n`,
  );
}

/** Requests a minute the check class admits here: more than any run sends, so that none is refused. */
const UNREACHED_CHECK_LIMIT = 100_000_000;

/** Writes the workload's profile into `folder` and prints the service thread's time by stage, per check. */
async function reportProfile(
  profile: Awaited<ReturnType<Awaited<ReturnType<typeof startCpuProfile>>>>,
  folder: string,
  workload: Workload,
  checks: number,
): Promise<void> {
  await mkdir(folder, { recursive: true });
  const file = join(folder, `check-${workload}.cpuprofile`);
  await writeFile(file, JSON.stringify(profile));
  const stages = [...timeByStage(profile, CHECK_STAGES)].sort(([, a], [, b]) => b - a);
  const total = stages.reduce((sum, [, us]) => sum + us, 0);
  console.log(`profile of the service's thread (${file}), µs per check of the service path (${checks}):`);
  for (const [stage, us] of stages) {
    console.log(`  ${(us / checks).toFixed(1).padStart(7)}  ${stage}`);
  }
  console.log(
    `  ${(total / checks).toFixed(1).padStart(7)}  in all (the direct runs' idle service included)\n`,
  );
}

/** CPU of this process, all its threads. */
function thisProcessCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function untilReady(url: string): Promise<void> {
  const ready = async () => (await fetch(`${url}/healthz/ready`)).status === 200;
  await until(ready, 'the decision service to be ready', 30_000, 200);
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
  'writes',
  'node CPU µs',
  'svc CPU µs',
  'SpiceDB µs',
  'OpenFGA µs',
  'in svc ms',
  'svc→db ms',
];

function printHeader(): void {
  console.log(COLUMNS.map((column) => column.padStart(12)).join(''));
}

function printLevel(
  workload: Workload,
  concurrency: number,
  direct: Summary,
  service: Summary,
  openfga: Summary | undefined,
): void {
  const row = (path: string, s: Summary) =>
    [
      concurrency,
      path,
      s.requests,
      s.p50.toFixed(3),
      s.p99.toFixed(3),
      s.throughput.toFixed(0),
      `${(s.allowedShare * 100).toFixed(0)}%`,
      workload === 'unique' ? s.wrong : '-',
      s.failed,
      s.writes,
      s.nodeUs.toFixed(0),
      s.serviceUs ? s.serviceUs.toFixed(0) : '',
      s.spicedbUs.toFixed(0),
      openfga ? s.openfgaUs.toFixed(0) : '-',
      s.serverMs ? s.serverMs.toFixed(3) : '',
      s.spicedbCallMs ? s.spicedbCallMs.toFixed(3) : '',
    ]
      .map((cell) => String(cell).padStart(12))
      .join('');
  console.log(row('direct', direct));
  console.log(row('service', service));
  if (openfga) console.log(row('openfga', openfga));
  const p50 = service.p50 / direct.p50;
  const throughput = service.throughput / direct.throughput;
  const target = TARGETS[workload];
  const verdict = `  target p50 <= ${target.p50}: ${p50 <= target.p50 ? 'met' : 'MISSED'}, throughput >= ${target.throughput}: ${throughput >= target.throughput ? 'met' : 'MISSED'}`;
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

// Last, once every constant above is initialised.
if (!isMainThread) runLoadWorker(workerData as LoadSetup);

if (isMainThread) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
