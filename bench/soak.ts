// npm run bench:soak [-- --minutes 10 --rate-creates 5 --rate-revokes 5 --rate-checks 200 --sample-seconds 15
//                       --warmup-minutes 2 --live-grants 200 --heap-mb 256]
//
// The whole stack under a steady load for a while: does any service grow? The development stack on loopback,
// each service in a process of its own; first --live-grants grants, then an open loop (the schedule does not
// wait for answers) of creates through the ACL API, revokes of the oldest grant, and /v1/check through the
// decision service as a decision_client (half for users with a live grant, half for users without). Every
// --sample-seconds: each process's RSS (/proc/<pid>/status), each service's event-loop lag p99 since the last
// sample (prom-client's nodejs_eventloop_lag_p99_seconds) and its 5xx answers, and what the load did. The
// verdict judges the three services after --warmup-minutes (bounds below); it exits 1 when one is broken or
// when stopped before the end. The services run with a V8 heap bound (--heap-mb, as the chart bounds the
// decision service's; 0: Node's default).
// Stops itself after --minutes, and stops everything it started, also on Ctrl-C or an error.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pLimit from 'p-limit';
import { ensureDevSigningKey } from '../dev/tokens/dev-signing-key.js';
import { mintToken } from '../dev/tokens/dev-token.js';
import { DECISION_CLIENT_ROLE } from '../src/config/decision-clients.js';
import { startDevStack, type StackProcess } from '../dev/stack/dev-stack.js';
import { serviceProcesses } from '../dev/stack/service-processes.js';
import { metricSum, metricValue } from '../src/observability/metric-text.js';
import { individualGrant } from './support/acl-api.js';
import { openLoop, type OpenLoop, type OperationCounts } from './support/open-loop.js';
import { residentBytes } from './support/resident-memory.js';
import { percentile } from './support/statistics.js';
import { sleep } from '../dev/wait/sleep.js';

/**
 * RSS growth allowed after warm-up, from the median of the first minute's samples to the median of the last
 * minute's (a median, so that one sample taken mid-collection does not decide): this many MB or this share, the
 * larger.
 */
const RSS_GROWTH_MB = 30;
const RSS_GROWTH_SHARE = 0.1;
/** Event-loop lag p99 allowed in any sample after warm-up. */
const LAG_P99_BOUND_MS = 200;
/** Failed requests allowed, as a share of all requests of the run. */
const FAILED_SHARE_BOUND = 0.001;
const MAX_IN_FLIGHT = 64;
const SEED_CONCURRENCY = 8;
const MB = 1024 * 1024;
const RSS_WINDOW_SECONDS = 60;

const OPTIONS = {
  minutes: { type: 'string', default: '10' },
  'rate-creates': { type: 'string', default: '5' },
  'rate-revokes': { type: 'string', default: '5' },
  'rate-checks': { type: 'string', default: '200' },
  'sample-seconds': { type: 'string', default: '15' },
  'warmup-minutes': { type: 'string', default: '2' },
  'live-grants': { type: 'string', default: '200' },
  'heap-mb': { type: 'string', default: '256' },
} as const;

type Options = Record<keyof typeof OPTIONS, number>;

interface Live {
  policyId: string;
  userId: string;
}

interface Load {
  acl: string;
  decision: string;
  ownerToken: string;
  checkerToken: string;
  itemId: string;
  /** Grants not yet revoked, oldest first. */
  live: Live[];
}

type OperationKind = 'creates' | 'revokes' | 'checks';

interface ServiceSample {
  rssBytes: number;
  /** Services only. */
  lagP99Ms?: number;
  /** V8 heap in use (prom-client's nodejs_heap_size_used_bytes): a leak grows it, a heap V8 sized larger does not. */
  heapUsedBytes?: number;
  /** 5xx answers since the service started. */
  serverErrorsSoFar?: number;
}

interface Sample {
  seconds: number;
  processes: Map<string, ServiceSample>;
  /** 5xx answers of all services since the previous sample. */
  serverErrors: number;
  load: Record<OperationKind, OperationCounts>;
}

async function main(): Promise<void> {
  const options = readOptions();
  const stopping = new AbortController();
  const onSignal = () => stopping.abort();
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-bench-soak-'));
  try {
    const passed = await soakStack(stateDir, options, stopping.signal);
    if (stopping.signal.aborted) console.log('\nstopped early: no verdict');
    if (!passed) process.exitCode = 1;
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** Starts the stack, soaks it and stops it; true when the verdict passes. */
async function soakStack(stateDir: string, options: Options, signal: AbortSignal): Promise<boolean> {
  // Always its own local stack, whatever the shell points at; the per-subject limits are not what is measured.
  const { KUBECONFIG: _cluster, ...inherited } = process.env;
  const env = {
    RATE_LIMIT_READ: 'off',
    RATE_LIMIT_WRITE: 'off',
    RATE_LIMIT_CHECK: 'off',
    ...inherited,
    ACL_PORT: '0',
    DECISION_PORT: '0',
    CONTROLLER_PORT: '0',
    LOG_LEVEL: 'error',
    ...(options['heap-mb'] > 0 ? { NODE_OPTIONS: `--max-old-space-size=${options['heap-mb']}` } : {}),
  };
  console.error('starting the development stack, each service in a process of its own…');
  const services = serviceProcesses(stateDir);
  const stack = await startDevStack({ stateDir, env, log: () => undefined, services });
  try {
    const item = stack.sampleItem?.spec;
    if (!item) throw new Error('no sample CatalogItem in config/samples');
    const key = await ensureDevSigningKey(stateDir);
    const ttlSeconds = options.minutes * 60 + 3_600;
    const load: Load = {
      acl: stack.env.ACL_URL,
      decision: stack.env.DECISION_URL,
      ownerToken: await mintToken(key, { sub: item.ownerId, ttlSeconds }),
      checkerToken: await mintToken(key, { sub: randomUUID(), roles: [DECISION_CLIENT_ROLE], ttlSeconds }),
      itemId: item.itemId,
      live: [],
    };
    console.error(`creating ${options['live-grants']} grants first…`);
    await seed(load, options['live-grants'], signal);
    printPreamble(options, stack.processes);
    const samples = await soak(load, options, stack.processes, signal);
    console.log(`\nload average at the end: ${loadAverage()}`);
    return !signal.aborted && judge(samples, options, stack.processes);
  } finally {
    console.error('stopping the development stack…');
    await stack.stop();
  }
}

function readOptions(): Options {
  const values = parseArgs({ options: OPTIONS }).values;
  const options = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, Number(value)]));
  for (const [name, value] of Object.entries(options)) {
    if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number ≥ 0, not ${value}`);
  }
  if ((options['sample-seconds'] ?? 0) <= 0) throw new Error('--sample-seconds must be more than 0');
  return options as Options;
}

async function seed(load: Load, count: number, signal: AbortSignal): Promise<void> {
  await pLimit(SEED_CONCURRENCY).map([...Array(count).keys()], async () => {
    if (!signal.aborted) await create(load);
  });
}

/** The load and the samples, until --minutes have passed or `signal` aborts. */
async function soak(
  load: Load,
  options: Options,
  processes: StackProcess[],
  signal: AbortSignal,
): Promise<Sample[]> {
  // Resets each service's lag histogram, so that the first sample covers its interval only.
  let previous = await sampleProcesses(processes);
  const loops: Record<OperationKind, OpenLoop> = {
    creates: openLoop(options['rate-creates'], MAX_IN_FLIGHT, () => create(load)),
    revokes: openLoop(options['rate-revokes'], MAX_IN_FLIGHT, () => revokeOldest(load)),
    checks: openLoop(options['rate-checks'], MAX_IN_FLIGHT, () => check(load)),
  };
  const samples: Sample[] = [];
  const started = performance.now();
  const intervalMs = options['sample-seconds'] * 1_000;
  try {
    printHeader(processes);
    for (let next = intervalMs; next <= options.minutes * 60_000 && !signal.aborted; next += intervalMs) {
      await sleepUntil(started + next, signal);
      if (signal.aborted) break;
      const measured = await sampleProcesses(processes);
      const sample: Sample = {
        seconds: Math.round((performance.now() - started) / 1_000),
        processes: measured,
        serverErrors: serverErrorsSoFar(measured) - serverErrorsSoFar(previous),
        load: {
          creates: loops.creates.takeCounts(),
          revokes: loops.revokes.takeCounts(),
          checks: loops.checks.takeCounts(),
        },
      };
      samples.push(sample);
      previous = measured;
      printSample(sample, processes, options['sample-seconds']);
    }
  } finally {
    await Promise.all(Object.values(loops).map((loop) => loop.stop()));
  }
  printFailures(loops);
  return samples;
}

/** Resolves at `at` (performance.now()'s clock), or as soon as `signal` aborts. */
async function sleepUntil(at: number, signal: AbortSignal): Promise<void> {
  await sleep(Math.max(0, at - performance.now()), signal).catch((error: unknown) => {
    if (!signal.aborted) throw error;
  });
}

// ---------------------------------------------------------------------------------------------------------
// The operations

async function create(load: Load): Promise<boolean> {
  const grant = individualGrant(load.itemId);
  const answer = await call(`${load.acl}/policy`, 'POST', load.ownerToken, { request: [grant] });
  if (answer.status !== 201) throw new Error(`POST /policy answered ${answeredWith(answer)}`);
  const [created] = answer.body.results as { policyId: string }[];
  load.live.push({ policyId: created?.policyId ?? '', userId: grant.userId });
  return true;
}

/** Revokes the oldest live grant; false when there is none. */
async function revokeOldest(load: Load): Promise<boolean> {
  const oldest = load.live.shift();
  if (!oldest) return false;
  const answer = await call(`${load.acl}/policy?id=${oldest.policyId}`, 'DELETE', load.ownerToken);
  if (answer.status !== 200) throw new Error(`DELETE /policy answered ${answeredWith(answer)}`);
  return true;
}

/** Half the checks ask about a user with a live grant, half about a user who never had one (must deny). */
async function check(load: Load): Promise<boolean> {
  const granted = Math.random() < 0.5 ? load.live[Math.floor(Math.random() * load.live.length)] : undefined;
  const answer = await call(`${load.decision}/v1/check`, 'POST', load.checkerToken, {
    subject_type: 'user',
    subject_id: granted?.userId ?? randomUUID(),
    organisation_id: '',
    resource_type: 'resource',
    resource_id: load.itemId,
    relation: 'api',
  });
  if (answer.status !== 200) throw new Error(`POST /v1/check answered ${answeredWith(answer)}`);
  const allowed = (answer.body.result as { allowed?: boolean } | undefined)?.allowed;
  if (!granted && allowed !== false) throw new Error('POST /v1/check allowed a user who never had a grant');
  return true;
}

/** The status and the envelope's detail, which names what failed (a dependency, a deadline). */
function answeredWith(answer: { status: number; body: Record<string, unknown> }): string {
  return `${answer.status}: ${String(answer.body.detail ?? '').slice(0, 120)}`;
}

async function call(url: string, method: string, token: string, body?: unknown) {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

// ---------------------------------------------------------------------------------------------------------
// Samples

async function sampleProcesses(processes: StackProcess[]): Promise<Map<string, ServiceSample>> {
  const samples = await Promise.all(
    processes.map(async (stackProcess): Promise<[string, ServiceSample]> => {
      const rssBytes = residentBytes(stackProcess.pid);
      if (!stackProcess.metricsUrl) return [stackProcess.name, { rssBytes }];
      const metrics = await (await fetch(stackProcess.metricsUrl)).text();
      return [
        stackProcess.name,
        {
          rssBytes,
          lagP99Ms: metricValue(metrics, 'nodejs_eventloop_lag_p99_seconds') * 1_000,
          heapUsedBytes: metricValue(metrics, 'nodejs_heap_size_used_bytes'),
          serverErrorsSoFar: metricSum(metrics, 'policygrant_http_request_errors_total', 'code_class="5xx"'),
        },
      ];
    }),
  );
  return new Map(samples);
}

function serverErrorsSoFar(measured: Map<string, ServiceSample>): number {
  return [...measured.values()].reduce((sum, service) => sum + (service.serverErrorsSoFar ?? 0), 0);
}

const SHORT_NAMES: Record<string, string> = {
  controller: 'ctrl',
  'decision-service': 'decision',
  'acl-api': 'acl',
  'kube-apiserver': 'apiserver',
};
const shortName = (name: string) => SHORT_NAMES[name] ?? name;

function columns(processes: StackProcess[]): string[] {
  return [
    't s',
    ...processes.flatMap((p) =>
      p.metricsUrl
        ? [`${shortName(p.name)} MB`, `${shortName(p.name)} heap`, `${shortName(p.name)} lag ms`]
        : [`${shortName(p.name)} MB`],
    ),
    'creates/s',
    'revokes/s',
    'checks/s',
    'check p99 ms',
    'failed',
    'skipped',
    '5xx',
  ];
}

function printPreamble(options: Options, processes: StackProcess[]): void {
  console.log(
    `machine: ${availableParallelism()} cores, load average ${loadAverage()}, node ${process.version}\n` +
      `load: ${options['rate-creates']} creates/s, ${options['rate-revokes']} revokes/s (oldest first), ` +
      `${options['rate-checks']} checks/s, open loop, at most ${MAX_IN_FLIGHT} of each in flight; ` +
      `${options['live-grants']} live grants at the start\n` +
      `processes: ${processes.map((p) => `${p.name} ${p.pid}`).join(', ')}; services' V8 heap bound ` +
      `${options['heap-mb'] > 0 ? `${options['heap-mb']} MB` : 'Node’s default'}\n` +
      `lag: event-loop delay p99 since the previous sample (includes prom-client's 10 ms resolution)\n`,
  );
}

const loadAverage = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

function printHeader(processes: StackProcess[]): void {
  console.log(columns(processes).map(pad).join(' '));
}

const pad = (cell: string | number) => String(cell).padStart(11);

function printSample(sample: Sample, processes: StackProcess[], sampleSeconds: number): void {
  const perSecond = (counts: OperationCounts) => (counts.ok / sampleSeconds).toFixed(1);
  const latencies = [...sample.load.checks.latenciesMs].sort((a, b) => a - b);
  const kinds = Object.values(sample.load);
  const cells = [
    sample.seconds,
    ...processes.flatMap((p) => {
      const measured = sample.processes.get(p.name) as ServiceSample;
      const rss = (measured.rssBytes / MB).toFixed(0);
      if (measured.lagP99Ms === undefined) return [rss];
      return [rss, ((measured.heapUsedBytes ?? 0) / MB).toFixed(0), measured.lagP99Ms.toFixed(1)];
    }),
    perSecond(sample.load.creates),
    perSecond(sample.load.revokes),
    perSecond(sample.load.checks),
    latencies.length ? percentile(latencies, 99).toFixed(1) : '-',
    kinds.reduce((sum, counts) => sum + counts.failed, 0),
    kinds.reduce((sum, counts) => sum + counts.skipped, 0),
    sample.serverErrors,
  ];
  console.log(cells.map(pad).join(' '));
}

function printFailures(loops: Record<OperationKind, OpenLoop>): void {
  for (const [kind, loop] of Object.entries(loops)) {
    for (const [message, count] of loop.failures()) console.log(`${kind} failed ${count}×: ${message}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Verdict

/** Prints the verdict on each bound; true when every one holds. */
function judge(samples: Sample[], options: Options, processes: StackProcess[]): boolean {
  const warm = samples.filter((sample) => sample.seconds >= options['warmup-minutes'] * 60);
  const judged = warm.length >= 2 ? warm : samples;
  const [first, last] = [judged[0], judged[judged.length - 1]];
  if (!first || !last || first === last) {
    console.log('\nfewer than two samples: no verdict');
    return false;
  }
  console.log(
    `\nverdict, from t=${first.seconds} s to t=${last.seconds} s` +
      (judged === warm
        ? ` (after ${options['warmup-minutes']} min of warm-up)`
        : ' (the run is no longer than its warm-up)'),
  );
  const services = processes.filter((p) => p.metricsUrl);
  const verdicts = [
    ...services.map((service) => judgeRss(service.name, judged)),
    ...services.map((service) => judgeLag(service.name, judged)),
    judgeFailures(samples),
  ];
  for (const other of processes.filter((p) => !p.metricsUrl)) {
    const growth = measureOf(last, other.name, rssOf) - measureOf(first, other.name, rssOf);
    console.log(
      `  ${other.name.padEnd(17)} RSS growth ${(growth / MB).toFixed(1)} MB (not judged: not ours)`,
    );
  }
  const passed = verdicts.every(Boolean);
  console.log(passed ? 'PASSED: every bound holds' : 'FAILED: a bound is broken');
  return passed;
}

type Measure = (measured: ServiceSample) => number;
const rssOf: Measure = (measured) => measured.rssBytes;
const heapOf: Measure = (measured) => measured.heapUsedBytes ?? 0;
const measureOf = (sample: Sample, name: string, measure: Measure) =>
  measure(sample.processes.get(name) as ServiceSample);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** The median of `measure` over the samples in the first and in the last RSS_WINDOW_SECONDS of `samples`. */
function atEachEnd(name: string, samples: Sample[], measure: Measure): [number, number] {
  const [from, to] = [samples[0]?.seconds ?? 0, samples.at(-1)?.seconds ?? 0];
  const window = Math.min(RSS_WINDOW_SECONDS, (to - from) / 2);
  const medianWhere = (inWindow: (seconds: number) => boolean) =>
    median(
      samples.filter((sample) => inWindow(sample.seconds)).map((sample) => measureOf(sample, name, measure)),
    );
  return [
    medianWhere((seconds) => seconds <= from + window),
    medianWhere((seconds) => seconds >= to - window),
  ];
}

function judgeRss(name: string, samples: Sample[]): boolean {
  const [base, end] = atEachEnd(name, samples, rssOf);
  const [heapBase, heapEnd] = atEachEnd(name, samples, heapOf);
  const bound = Math.max(RSS_GROWTH_MB * MB, RSS_GROWTH_SHARE * base);
  const holds = end - base <= bound;
  const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
  return report(
    holds,
    `${name.padEnd(17)} RSS (median of each end's minute) ${mb(base)} → ${mb(end)}, growth ${mb(end - base)} ${atMost(holds)} ` +
      `${mb(bound)} (${RSS_GROWTH_MB} MB or ${RSS_GROWTH_SHARE * 100}%, the larger); heap in use ${mb(heapBase)} → ${mb(heapEnd)}`,
  );
}

function judgeLag(name: string, samples: Sample[]): boolean {
  const lags = samples.map((sample) => sample.processes.get(name)?.lagP99Ms ?? 0);
  const worst = Math.max(...lags);
  const holds = worst <= LAG_P99_BOUND_MS;
  return report(
    holds,
    `${name.padEnd(17)} event-loop lag p99: worst sample ${worst.toFixed(1)} ms ${atMost(holds)} ` +
      `${LAG_P99_BOUND_MS} ms (median sample ${median(lags).toFixed(1)} ms)`,
  );
}

function judgeFailures(samples: Sample[]): boolean {
  const kinds = samples.flatMap((sample) => Object.values(sample.load));
  const failed = kinds.reduce((sum, counts) => sum + counts.failed, 0);
  const requests = kinds.reduce((sum, counts) => sum + counts.ok + counts.failed, 0);
  const holds = failed <= FAILED_SHARE_BOUND * requests;
  return report(
    holds,
    `failed requests ${failed} of ${requests} ${atMost(holds)} ${FAILED_SHARE_BOUND * 100}%`,
  );
}

const atMost = (holds: boolean) => (holds ? '≤' : '>');

function report(holds: boolean, text: string): boolean {
  console.log(`  ${holds ? 'ok    ' : 'BROKEN'} ${text}`);
  return holds;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
