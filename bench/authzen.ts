// npm run bench:authzen [-- --rounds 40 --singles 200 --warm-up 3 --large-rounds 5 --runtime compiled
//   --cpu-prof <folder>]
//
// The AuthZEN routes of the decision service against SpiceDB called directly, in one run against one SpiceDB of
// its own (memory datastore, loopback): a batch of 100 evaluations against one CheckBulkPermissions of the same
// pairs; search/resource for a subject with 1,000 usable items among 10,000 against LookupResources (every page
// of 1,000); search/subject for an item 1,000 users may use against LookupSubjects, and for one nobody may use
// (what the route adds to any search: the HTTP hop, its checks and an empty answer); a single evaluation against
// POST /v1/check; then search/subject of an item 100,000 organisation members may use, page by page (the time of
// its first, middle and last page, and the service's heap during each of them). Each ratio prints whether it
// meets its goal, and the load average is printed beside the figures. What production runs is measured: the
// decision service compiled, in a process of its own
// (src/cmd/decision-service.ts, configured by its environment), called through a keep-alive undici Pool; the
// direct calls go from this process over its own gRPC connection. Each round times both modes, which goes first
// alternating from round to round, and every round asks pairs of its own (the decision cache must not answer a
// repeat). Bounded: rounds × a few calls.
// `--large-rounds` is how many times the 100,000-member search is paged through (bounded: rounds × 100 pages).
// `--cpu-prof <folder>` writes the service's V8 CPU profile there when it stops (open it in Chrome's DevTools).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { freePort } from '../dev/localplane/free-port.js';
import { startProcess, type ManagedProcess } from '../dev/localplane/managed-process.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER, mintToken } from '../dev/tokens/dev-token.js';
import { SortedIds } from '../src/decision/authzen/sorted-ids.js';
import { DECISION_CLIENT_ROLE } from '../src/config/decision-clients.js';
import { PLATFORM_SEARCH_CLIENT_ROLE } from '../src/decision/check-callers.js';
import { DEFAULT_REVISION_BARRIER } from '../src/decision/revision-barrier.js';
import type { BulkCheckItem, RelationshipUpdate, SpiceDBClient } from '../src/spicedb/client.js';
import { encodeObjectId } from '../src/spicedb/object-id.js';
import { startBenchSpiceDB } from './support/bench-spicedb.js';
import { devBearer } from './support/dev-bearer.js';
import { printTable } from './support/markdown-table.js';
import { parseNodeRuntime, runCompiled, siblingModule } from './support/node-runtime.js';
import { median } from './support/statistics.js';
import { until } from '../dev/wait/until.js';
import { sleep } from '../dev/wait/sleep.js';

const ITEMS = 10_000;
const USABLE = 1_000;
const BATCH = 100;
const PAGE = 1_000;
/** The members of the organisation whose GROUP grant the large search/subject lists, 100 pages of them. */
const MEMBERS = 100_000;
const SETTLE_MS = DEFAULT_REVISION_BARRIER.quantizationMs + DEFAULT_REVISION_BARRIER.marginMs;
const IN_A_DAY = new Date(Date.now() + 86_400_000);
const MINIMIZE_LATENCY = { minimizeLatency: true as const };

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '40' },
    singles: { type: 'string', default: '200' },
    /** Rounds run first and not counted: the JIT of both processes, connections, SpiceDB's caches. */
    'warm-up': { type: 'string', default: '3' },
    /** Complete searches of the 100,000 members; each is 100 pages. */
    'large-rounds': { type: 'string', default: '5' },
    runtime: { type: 'string', default: 'compiled' },
    'cpu-prof': { type: 'string' },
  },
});
const rounds = Number(options.rounds);
const singles = Number(options.singles);
const warmUp = Number(options['warm-up']);
const largeRounds = Number(options['large-rounds']);

const item = (index: number) => `urn:dx:item:bench-${index}`;
const consumer = 'bench-consumer';
const popularItem = item(0);
/** An item nobody may use: its search/subject answers nothing, and measures the route's own cost alone. */
const UNUSED_ITEM = 'urn:dx:item:bench-unused';
const grant = (itemId: string, userId: string): RelationshipUpdate => ({
  operation: 'touch',
  relationship: {
    resource: { type: 'resource', id: encodeObjectId(itemId) },
    relation: 'api_consumer',
    subject: { type: 'user', id: encodeObjectId(userId) },
    expiresAt: IN_A_DAY,
  },
});

/** The item the members of LARGE_ORGANISATION may use: its search/subject answers 100,000 users. */
const LARGE_ITEM = 'urn:dx:item:bench-members';
const LARGE_ORGANISATION = 'bench-organisation';
const member = (index: number) => `member-${index}`;

/**
 * 10,000 items, 1,000 of them usable by the consumer, the others by one user each; 1,000 users of item 0; and
 * an organisation of 100,000 members holding a GROUP grant on an item of its own.
 */
function relationships(): RelationshipUpdate[] {
  const items = Array.from({ length: ITEMS }, (_, index) =>
    grant(item(index), index % (ITEMS / USABLE) === 0 ? consumer : `owner-${index}`),
  );
  const users = Array.from({ length: USABLE - 1 }, (_, index) => grant(popularItem, `user-${index}`));
  const organisation = { type: 'organization', id: encodeObjectId(LARGE_ORGANISATION) };
  const members = Array.from({ length: MEMBERS }, (_, index): RelationshipUpdate => ({
    operation: 'touch',
    relationship: {
      resource: organisation,
      relation: 'member',
      subject: { type: 'user', id: encodeObjectId(member(index)) },
    },
  }));
  const groupGrant: RelationshipUpdate = {
    operation: 'touch',
    relationship: {
      resource: { type: 'resource', id: encodeObjectId(LARGE_ITEM) },
      relation: 'api_consumer',
      subject: { ...organisation, relation: 'member' },
      expiresAt: IN_A_DAY,
    },
  };
  return [...items, ...users, ...members, groupGrant];
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

async function allResources(spicedb: SpiceDBClient): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await spicedb.lookupResources({
      resourceType: 'resource',
      permission: 'api_consumer',
      subject: { type: 'user', id: consumer },
      consistency: MINIMIZE_LATENCY,
      limit: PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    count += page.resourceIds.length;
    if (page.resultCount < PAGE || page.cursor === undefined) return count;
    cursor = page.cursor;
  }
}

type SpiceDBServer = Awaited<ReturnType<typeof startBenchSpiceDB>>['server'];

/**
 * The decision service as the image runs it (compiled, unless `--runtime tsx`), in a process of its own,
 * configured by its environment: JWTs of the development key, production's log level (the lines go to its log).
 */
async function startService(stateDir: string, spicedb: SpiceDBServer, jwksPath: string) {
  const port = await freePort();
  const entry = siblingModule(import.meta.url, '../src/cmd/decision-service.ts');
  const profile = options['cpu-prof'];
  const child = startProcess({
    name: 'decision-service',
    command: process.execPath,
    args: [
      ...entry.execArgv,
      ...(profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(profile)]),
      entry.path,
    ],
    logFile: join(stateDir, 'decision-service.log'),
    env: {
      ...process.env,
      SPICEDB_ENDPOINT: spicedb.endpoint,
      SPICEDB_TOKEN: spicedb.token,
      SPICEDB_TLS: 'plaintext',
      DECISION_HOST: '127.0.0.1',
      DECISION_PORT: String(port),
      JWKS_FILE: jwksPath,
      JWT_ISSUER: DEV_TOKEN_ISSUER,
      JWT_AUDIENCE: DEV_TOKEN_AUDIENCE,
      DECISION_SEARCH_PLATFORM_ROLES: PLATFORM_SEARCH_CLIENT_ROLE,
      LOG_LEVEL: 'info',
    },
  });
  return { process: child, url: `http://127.0.0.1:${port}` };
}

/** POST with a JSON body over one keep-alive connection (calls are made one at a time); a non-200 throws. */
function serviceClient(url: string, authorization: string) {
  const pool = new Pool(url, { connections: 1, pipelining: 1 });
  const post = async (path: string, body: unknown) => {
    const response = await pool.request({
      method: 'POST',
      path,
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.body.json()) as Record<string, unknown>;
    if (response.statusCode !== 200) {
      throw new Error(`${path}: ${response.statusCode} ${JSON.stringify(answer)}`);
    }
    return answer;
  };
  return { post, close: () => pool.close() };
}

type Post = ReturnType<typeof serviceClient>['post'];

/** Every page of search/resource for the consumer; the count of results. */
async function searchResources(post: Post): Promise<number> {
  let count = 0;
  let token = '';
  do {
    const answer = (await post('/access/v1/search/resource', {
      subject: { type: 'user', id: consumer },
      resource: { type: 'resource' },
      action: { name: 'api' },
      page: { limit: PAGE, ...(token ? { token } : {}) },
    })) as { results: unknown[]; page: { next_token: string } };
    count += answer.results.length;
    token = answer.page.next_token;
  } while (token);
  return count;
}

const pairs = (round: number) => Array.from({ length: BATCH }, (_, index) => item(round * BATCH + index));
const bulkItems = (items: string[]): BulkCheckItem[] =>
  items.map((itemId) => ({
    resource: { type: 'resource', id: encodeObjectId(itemId) },
    permission: 'api_consumer',
    subject: { type: 'user', id: consumer },
  }));
const evaluations = (items: string[]) => ({
  subject: { type: 'user', id: consumer },
  action: { name: 'api' },
  evaluations: items.map((id) => ({ resource: { type: 'resource', id } })),
});

type Samples = [route: number[], direct: number[]];
/** Each comparison and its goal: the most its ratio (the median of the rounds' ratios) may be; none for the hop. */
const COMPARISONS: readonly { name: string; goal: number | undefined }[] = [
  { name: 'batch of 100 evaluations vs CheckBulkPermissions', goal: 1.2 },
  { name: 'search/resource (1,000 of 10,000) vs LookupResources', goal: 1.2 },
  { name: 'search/subject (1,000 users) vs LookupSubjects', goal: 1.2 },
  { name: 'search/subject (no user: the hop alone) vs LookupSubjects', goal: undefined },
  { name: 'single evaluation vs POST /v1/check', goal: 1.05 },
];

/**
 * Times both calls, one after the other: the route first in even rounds, the direct call first in odd ones, so
 * that neither always runs right after the other (SpiceDB's and the service's work left over from a call).
 */
async function timedPair(
  round: number,
  route: () => Promise<unknown>,
  direct: () => Promise<unknown>,
): Promise<[number, number]> {
  if (round % 2 === 0) return [await timed(route), await timed(direct)];
  const directTime = await timed(direct);
  return [await timed(route), directTime];
}

/** search/subject and LookupSubjects of the users who may use the item through its API. */
function subjectSearches(
  post: Post,
  client: SpiceDBClient,
  itemId: string,
): [route: () => Promise<unknown>, direct: () => Promise<unknown>] {
  return [
    () =>
      post('/access/v1/search/subject', {
        subject: { type: 'user' },
        resource: { type: 'resource', id: itemId },
        action: { name: 'api' },
      }),
    () =>
      client.lookupSubjects({
        resource: { type: 'resource', id: encodeObjectId(itemId) },
        permission: 'api_consumer',
        subjectType: 'user',
        consistency: MINIMIZE_LATENCY,
      }),
  ];
}

/** One round of the bulk comparisons, each mode once; pairs of the round's own. */
async function bulkRound(post: Post, client: SpiceDBClient, round: number): Promise<[number, number][]> {
  // Distinct pairs for the two modes: neither answers from the other's decision cache or SpiceDB's cache.
  const [first, second] = [pairs(2 * round), pairs(2 * round + 1)];
  return [
    await timedPair(
      round,
      () => post('/access/v1/evaluations', evaluations(first)),
      () => client.checkBulkPermissions(bulkItems(second), MINIMIZE_LATENCY),
    ),
    await timedPair(
      round,
      () => searchResources(post),
      () => allResources(client),
    ),
    await timedPair(round, ...subjectSearches(post, client, popularItem)),
    await timedPair(round, ...subjectSearches(post, client, UNUSED_ITEM)),
  ];
}

/** A single evaluation and a /v1/check of the same item, for users of their own (no cache answers). */
function singleRound(post: Post, index: number): Promise<[number, number]> {
  return timedPair(
    index,
    () =>
      post('/access/v1/evaluation', {
        subject: { type: 'user', id: `single-a-${index}` },
        resource: { type: 'resource', id: item(index) },
        action: { name: 'api' },
      }),
    () =>
      post('/v1/check', {
        subject_type: 'user',
        subject_id: `single-c-${index}`,
        resource_type: 'resource',
        resource_id: item(index),
        relation: 'api',
      }),
  );
}

/** Warm-up rounds first (not counted), then the measured ones; the samples of each comparison. */
async function measure(post: Post, client: SpiceDBClient): Promise<Samples[]> {
  const samples: Samples[] = COMPARISONS.map(() => [[], []]);
  const record = (index: number, [route, direct]: [number, number]) => {
    samples[index]?.[0].push(route);
    samples[index]?.[1].push(direct);
  };
  for (let round = 0; round < warmUp + rounds; round++) {
    const timings = await bulkRound(post, client, round);
    if (round >= warmUp) timings.forEach((timing, index) => record(index, timing));
  }
  for (let index = 0; index < warmUp * 10 + singles; index++) {
    const timing = await singleRound(post, index);
    if (index >= warmUp * 10) record(COMPARISONS.length - 1, timing);
  }
  return samples;
}

/** The service's V8 heap in use, from its own metrics (prom-client's process metrics). */
async function serviceHeap(url: string): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(metrics)?.[1]);
}

/** Which page of the 100 pages is timed as which. */
const TIMED_PAGES = { first: 0, middle: MEMBERS / PAGE / 2 - 1, last: MEMBERS / PAGE - 1 } as const;
type TimedPage = keyof typeof TIMED_PAGES;
/** How often the service's heap is read while a timed page is in flight. */
const HEAP_SAMPLE_MS = 20;

interface PageFigures {
  /** Milliseconds of the request. */
  time: number[];
  /** Bytes of the service's heap beyond what it used before the request, at its largest during the request. */
  heap: number[];
}

/**
 * `call`, timed, while the service's heap is read every HEAP_SAMPLE_MS over a connection of its own (the service
 * answers /metrics between the stream's messages): its largest heap during the call beyond its heap before.
 */
async function timedWithHeap<T>(url: string, call: () => Promise<T>): Promise<[T, number, number]> {
  const before = await serviceHeap(url);
  let peak = before;
  let done = false;
  const sampling = (async () => {
    while (!done) {
      await sleep(HEAP_SAMPLE_MS);
      peak = Math.max(peak, await serviceHeap(url));
    }
  })();
  const started = performance.now();
  const answer = await call().finally(() => {
    done = true;
  });
  const elapsed = performance.now() - started;
  await sampling;
  peak = Math.max(peak, await serviceHeap(url));
  return [answer, elapsed, peak - before];
}

/** `largeRounds` complete searches of the 100,000 members, every page of 1,000 in turn. */
async function measureLargeSearch(post: Post, url: string): Promise<Record<TimedPage, PageFigures>> {
  const measured: Record<TimedPage, PageFigures> = {
    first: { time: [], heap: [] },
    middle: { time: [], heap: [] },
    last: { time: [], heap: [] },
  };
  const body = {
    subject: { type: 'user' },
    resource: { type: 'resource', id: LARGE_ITEM },
    action: { name: 'api' },
  };
  const timedPage = (index: number) =>
    (Object.keys(TIMED_PAGES) as TimedPage[]).find((name) => TIMED_PAGES[name] === index);
  for (let round = 0; round < largeRounds; round++) {
    let token = '';
    let found = 0;
    for (let index = 0; index === 0 || token; index++) {
      const request = () =>
        post('/access/v1/search/subject', {
          ...body,
          page: { limit: PAGE, ...(token ? { token } : {}) },
        }) as Promise<{ page: { next_token: string; count: number } }>;
      const timed = timedPage(index);
      let answer: Awaited<ReturnType<typeof request>>;
      if (timed === undefined) {
        answer = await request();
      } else {
        const [page, time, heap] = await timedWithHeap(url, request);
        answer = page;
        measured[timed].time.push(time);
        measured[timed].heap.push(heap);
      }
      found += answer.page.count;
      token = answer.page.next_token;
    }
    if (found !== MEMBERS) throw new Error(`the search found ${found} members, not ${MEMBERS}`);
  }
  return measured;
}

function printLargeSearch(pages: Record<TimedPage, PageFigures>): void {
  const held = new SortedIds(Array.from({ length: MEMBERS }, (_, index) => encodeObjectId(member(index))));
  const megabytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  console.log(
    `\nsearch/subject over ${MEMBERS.toLocaleString('en')} members, pages of ${PAGE.toLocaleString('en')}: ` +
      `${largeRounds} complete searches; medians (largest); memory: the service's heap at its largest during ` +
      `the request beyond its heap before it (read every ${HEAP_SAMPLE_MS} ms), garbage not yet collected included`,
  );
  printTable(
    ['page', 'time (ms)', 'memory (MB)'],
    Object.entries(pages).map(([name, { time, heap }]) => [
      name,
      `${median(time).toFixed(2)} (${Math.max(...time).toFixed(2)})`,
      `${megabytes(median(heap))} (${megabytes(Math.max(...heap))})`,
    ]),
  );
  console.log(
    `held between pages: ${megabytes(held.bytes)} MB (${(held.bytes / MEMBERS).toFixed(1)} bytes a member)`,
  );
}

/** The machine's state beside each set of figures: the load of the other work sharing it. */
function machineState(): string {
  const load = loadavg()
    .map((average) => average.toFixed(2))
    .join(' ');
  return `machine: ${availableParallelism()} cores, load average ${load}`;
}

async function main(): Promise<void> {
  if (await runCompiled(import.meta.url, parseNodeRuntime(options.runtime))) return;
  const stateDir = await mkdtemp(join(tmpdir(), 'bench-authzen-'));
  const { server, client } = await startBenchSpiceDB(stateDir);
  let service: { process: ManagedProcess; url: string } | undefined;
  let http: ReturnType<typeof serviceClient> | undefined;
  try {
    const { key } = await devBearer(stateDir);
    await client.writeRelationshipsInBatches(relationships());
    service = await startService(stateDir, server, key.jwksPath);
    const authorization = `Bearer ${await mintToken(key, {
      sub: randomUUID(),
      roles: [DECISION_CLIENT_ROLE, PLATFORM_SEARCH_CLIENT_ROLE],
    })}`;
    http = serviceClient(service.url, authorization);
    const { post } = http;
    // Ready, and the snapshot SpiceDB serves at minimize_latency holds the relationships.
    await until(
      async () => (await searchResources(post).catch(() => 0)) === USABLE,
      'the relationships to be visible',
      300_000,
      100,
    );
    // Past the barrier's window (quantization and margin): the steady state, where a search is read at
    // minimize_latency as the direct calls are, not the window right after the relationships were written.
    await sleep(SETTLE_MS);
    console.log(`before the rounds: ${machineState()}`);
    const samples = await measure(post, client);
    console.log(`after the rounds: ${machineState()}`);
    console.log(
      `bench:authzen: ${rounds} rounds, ${singles} single evaluations (after ${warmUp} warm-up rounds); ` +
        `service ${options.runtime}, own process, keep-alive undici Pool; medians in ms; ratio: the median of ` +
        "the rounds' ratios (route / direct of the same round), and the ratio of the medians",
    );
    printTable(
      ['comparison', 'AuthZEN route', 'direct / check', 'ratio', 'ratio of medians', 'goal'],
      COMPARISONS.map(({ name, goal }, index) => {
        const [route, direct] = samples[index] ?? [[], []];
        const ratio = median(route.map((time, round) => time / (direct[round] ?? Number.NaN)));
        return [
          name,
          median(route).toFixed(2),
          median(direct).toFixed(2),
          ratio.toFixed(2),
          (median(route) / median(direct)).toFixed(2),
          goal === undefined ? 'none' : `≤ ${goal}: ${ratio <= goal ? 'met' : 'unmet'}`,
        ];
      }),
    );
    if (largeRounds > 0) {
      printLargeSearch(await measureLargeSearch(post, service.url));
      console.log(`after the large search: ${machineState()}`);
    }
  } finally {
    await http?.close();
    await service?.process.stop();
    client.close();
    await server.process.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
