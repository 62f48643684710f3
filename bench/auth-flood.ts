// npm run bench:auth-flood
//
// Latency of JWT-authenticated POST /v1/check alone and during a flood of bad Basic credentials. The JWT callers
// present a new token on every request, so each one is a real signature verification (on the libuv pool, like
// scrypt). The flood is open-loop: FLOOD_RATE requests per second with wrong secrets for a real client id,
// spread over FLOOD_ADDRESSES loopback addresses (127.0.1.x), whether or not earlier ones were answered. Twice:
// with the service's default protections (failed authentications limited per address and per claimed identity,
// scrypt one at a time with a bounded queue) and without them (every attempt verified, as many scrypt runs at once as the pool
// takes). The decision service runs in this process on loopback with a SpiceDB of its own (memory datastore);
// the load runs in a worker thread. The secret hash has the production scrypt parameters. Bounded: SECONDS per
// phase, a JWT request gives up after REQUEST_TIMEOUT_MS; the process ends once the libuv pool has run the
// scrypt verifications the unprotected flood queued (at most FLOOD_RATE x SECONDS of them).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import type { Registry as MetricsRegistry } from 'prom-client';
import { createBasicVerifier, DEFAULT_SCRYPT_BOUND } from '../src/auth/basic-verifier.js';
import { mintToken } from '../dev/tokens/dev-token.js';
import type { BearerVerifier } from '../src/auth/verifiers.js';
import { hashSecret } from '../src/auth/secret-hash.js';
import { decisionRequestLimits } from '../src/config/rate-limit-config.js';
import { DECISION_CLIENT_ROLE } from '../src/config/decision-clients.js';
import { startDecisionService } from '../src/decision/decision-service.js';
import { createMetricsRegistry } from '../src/observability/metrics.js';
import { percentile } from './support/statistics.js';
import { startBenchSpiceDB } from './support/bench-spicedb.js';
import { devBearer } from './support/dev-bearer.js';
import { until } from '../dev/wait/until.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const FLOOD_RATE = Number(process.env.BENCH_FLOOD_RATE ?? 100);
const FLOOD_ADDRESSES = Number(process.env.BENCH_FLOOD_ADDRESSES ?? 64);
const JWT_CONCURRENCY = Number(process.env.BENCH_JWT_CONCURRENCY ?? 4);
const REQUEST_TIMEOUT_MS = 10_000;
/** Fresh tokens for one mode's two phases: enough for 4,000 checks/s (an idle machine answers up to about 2,400). */
const TOKENS = Number(process.env.BENCH_TOKENS ?? SECONDS * 2 * 4_000);
const CLIENT_ID = 'gateway';
const CHECK = JSON.stringify({
  subject_type: 'user',
  subject_id: 'bench-user',
  resource_type: 'resource',
  resource_id: 'urn:dx:item:bench',
  relation: 'api',
});

type Mode = 'protected' | 'unprotected';

interface Latencies {
  count: number;
  failures: number;
  p50: number;
  p99: number;
}

interface Target {
  url: string;
  tokens: string[];
}

/** The answer's status; 0 when there was none within REQUEST_TIMEOUT_MS or the connection failed. */
function post(url: string, authorization: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve) => {
    const request = http.request(url, {
      method: 'POST',
      agent,
      timeout: REQUEST_TIMEOUT_MS,
      headers: { authorization, 'content-type': 'application/json' },
    });
    request.on('timeout', () => request.destroy());
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
    request.end(CHECK);
  });
}

/** JWT_CONCURRENCY callers checking back to back for SECONDS, each request with a token not seen before. */
async function measureJwtChecks({ url, tokens }: Target): Promise<Latencies> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: JWT_CONCURRENCY });
  const endsAt = performance.now() + SECONDS * 1_000;
  const samples: number[] = [];
  let failures = 0;
  const caller = async () => {
    while (performance.now() < endsAt) {
      const started = performance.now();
      const token = tokens.pop();
      if (token === undefined) throw new Error('out of tokens: raise BENCH_TOKENS');
      const status = await post(`${url}/v1/check`, `Bearer ${token}`, agent);
      samples.push(performance.now() - started);
      if (status !== 200) failures++;
    }
  };
  await Promise.all(Array.from({ length: JWT_CONCURRENCY }, caller));
  agent.destroy();
  samples.sort((a, b) => a - b);
  return { count: samples.length, failures, p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** FLOOD_RATE requests a second with wrong Basic secrets from FLOOD_ADDRESSES addresses; answers by status. */
function startFlood(url: string): { stop(): Promise<Map<number, number>> } {
  const statuses = new Map<number, number>();
  const agents = Array.from(
    { length: FLOOD_ADDRESSES },
    (_, index) => new http.Agent({ keepAlive: true, localAddress: `127.0.1.${index + 1}` }),
  );
  const outstanding = new Set<Promise<void>>();
  let sent = 0;
  const send = () => {
    const agent = agents[sent % agents.length] as http.Agent;
    const secret = Buffer.from(`${CLIENT_ID}:wrong-${sent++}`).toString('base64');
    const answer = post(`${url}/v1/check`, `Basic ${secret}`, agent).then((status) => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      outstanding.delete(answer);
    });
    outstanding.add(answer);
  };
  const started = performance.now();
  // Sends for SECONDS, the length of the phase, even while the JWT callers' last requests are still waiting.
  const timer = setInterval(() => {
    const elapsed = Math.min(performance.now() - started, SECONDS * 1_000);
    const due = Math.floor((elapsed / 1_000) * FLOOD_RATE);
    while (sent < due) send();
  }, 10);
  return {
    async stop() {
      clearInterval(timer);
      for (const agent of agents) agent.destroy();
      await Promise.all(outstanding);
      return statuses;
    },
  };
}

interface LoadResult {
  alone: Latencies;
  during: Latencies;
  floodAnswers: Array<[number, number]>;
}

// Load generator (worker thread): warm-up, JWT checks alone, JWT checks during the flood.

if (!isMainThread) void runLoad(workerData as Target);

async function runLoad(target: Target): Promise<void> {
  await measureJwtChecks(target); // warm-up: JIT, connections, SpiceDB
  const alone = await measureJwtChecks(target);
  const flood = startFlood(target.url);
  const during = await measureJwtChecks(target);
  const result: LoadResult = { alone, during, floodAnswers: [...(await flood.stop())] };
  parentPort?.postMessage(result);
}

function loadInWorker(target: Target): Promise<LoadResult> {
  const here = JSON.stringify(import.meta.url);
  const entry = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => tsx.tsImport(${here}, ${here}))`;
  const worker = new Worker(entry, { eval: true, workerData: target });
  return new Promise<LoadResult>((resolve, reject) => {
    worker.once('message', (result: LoadResult) => resolve(result));
    worker.once('error', reject);
  }).finally(() => worker.terminate());
}

// The service (main thread)

async function scryptRuns(registry: MetricsRegistry): Promise<number> {
  const metric = await registry.getSingleMetric('policygrant_basic_auth_verifications_total')?.get();
  return (metric?.values ?? [])
    .filter((value) => value.labels.outcome === 'accepted' || value.labels.outcome === 'rejected')
    .reduce((sum, value) => sum + value.value, 0);
}

async function runMode(
  mode: Mode,
  spicedb: { endpoint: string; token: string },
  bearer: BearerVerifier,
  hash: string,
  tokens: string[],
) {
  const metricsRegistry = createMetricsRegistry();
  const basic = createBasicVerifier([{ clientId: CLIENT_ID, hash, roles: [] }], {
    metricsRegistry,
    scrypt: mode === 'protected' ? DEFAULT_SCRYPT_BOUND : { concurrency: 10_000, queue: 10_000 },
  });
  const service = await startDecisionService(
    {
      port: 0,
      host: '127.0.0.1',
      spicedb: { ...spicedb, transport: 'plaintext' },
      limits: mode === 'protected' ? decisionRequestLimits({}) : { perSubject: {} },
    },
    {
      authenticators: { bearer, basic },
      metricsRegistry,
      logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
    },
  );
  try {
    await untilReady(service.url);
    const runsBefore = await scryptRuns(metricsRegistry);
    const load = await loadInWorker({ url: service.url, tokens });
    return { mode, ...load, scrypt: (await scryptRuns(metricsRegistry)) - runsBefore };
  } finally {
    await service.stop();
  }
}

async function untilReady(url: string): Promise<void> {
  const ready = async () => (await fetch(`${url}/healthz/ready`).catch(() => undefined))?.status === 200;
  await until(ready, 'the decision service to be ready', 60_000, 200);
}

const ms = (value: number) => value.toFixed(1);

async function main(): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'bench-auth-flood-'));
  const { server: spicedb, client: schemaClient } = await startBenchSpiceDB(stateDir);
  schemaClient.close();
  try {
    const { key, bearer } = await devBearer(stateDir);
    const hash = await hashSecret('the right secret');
    const mintTokens = () =>
      Promise.all(
        Array.from({ length: TOKENS }, () =>
          mintToken(key, { sub: randomUUID(), roles: [DECISION_CLIENT_ROLE] }),
        ),
      );
    console.log(
      `auth flood: ${SECONDS} s per phase, ${JWT_CONCURRENCY} JWT callers (a new token per request), ` +
        `${FLOOD_RATE} bad Basic credentials/s from ${FLOOD_ADDRESSES} loopback addresses, production scrypt`,
    );
    console.log(
      'mode         phase   checks  non-200  p50 ms  p99 ms  p99 ratio  scrypt runs  flood answers',
    );
    for (const mode of ['protected', 'unprotected'] as const) {
      const result = await runMode(mode, spicedb, bearer, hash, await mintTokens());
      const answers = result.floodAnswers
        .map(([status, count]) => `${status === 0 ? 'none' : status}: ${count}`)
        .join(', ');
      for (const [phase, latencies] of [
        ['alone', result.alone],
        ['flood', result.during],
      ] as const) {
        const ratio = phase === 'flood' ? (latencies.p99 / result.alone.p99).toFixed(2) : '';
        console.log(
          [
            mode.padEnd(12),
            phase.padEnd(6),
            String(latencies.count).padStart(7),
            String(latencies.failures).padStart(8),
            ms(latencies.p50).padStart(7),
            ms(latencies.p99).padStart(7),
            ratio.padStart(10),
            (phase === 'flood' ? String(result.scrypt) : '').padStart(12),
            phase === 'flood' ? ` ${answers}` : '',
          ].join(' '),
        );
      }
    }
  } finally {
    await spicedb.process.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

if (isMainThread) await main();
