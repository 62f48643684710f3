// npm run bench:check-overhead [-- --requests 20000 --concurrency 16 --rounds 3 --runtime compiled
//                                 --against <commit>]
//
// What the decision service's HTTP side costs per check: the CPU of this process per request while a load
// generator in another process (undici, keep-alive) sends one check again and again, so that the service
// answers it from memory (its decision cache) and SpiceDB is not asked. Baselines in the same run answer the
// same bytes with no work of their own: node's HTTP server, and an express app with one handler, served as
// express's own `app.listen` serves it (express sets the request's and response's prototypes on every request)
// and as this project's servers serve it (src/http/express-messages.ts: born with those prototypes). A last row
// sends every check with a subject of its own, so that each is asked of SpiceDB (batched): what a miss adds,
// SpiceDB's own CPU not counted (it runs in its own process). Tracing is off in every row but one, which
// measures the check answered from memory with OpenTelemetry tracing on, every span exported over OTLP to a
// receiver in this process (which reads and drops the batches; its CPU counts in that row).
//
// `--against <commit>`: the working tree against a commit instead, in one run. The commit is built beside the
// working tree (bench/support/commit-build.ts), each side's decision service runs alone in a process of its
// own on the same SpiceDB, the rounds alternate the sides, and each side's CPU per check (its process's) is
// printed, answered from memory and asked of SpiceDB, with the working tree's ratio to the commit.
import { randomUUID } from 'node:crypto';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import express from 'express';
import { pino } from 'pino';
import { mintToken } from '../dev/tokens/dev-token.js';
import { DECISION_CLIENT_ROLE } from '../src/config/decision-clients.js';
import { startDecisionService } from '../src/decision/decision-service.js';
import { startTracing, type RunningTracing } from '../src/observability/tracing-sdk.js';
import { listen } from '../src/http/server.js';
import { startBenchSpiceDB } from './support/bench-spicedb.js';
import { printTable } from './support/markdown-table.js';
import { median } from './support/statistics.js';
import type { HttpLoadRequest, HttpLoadResult } from './support/http-load.js';
import { until } from '../dev/wait/until.js';
import { devBearer } from './support/dev-bearer.js';
import { parseNodeRuntime, runCompiled, siblingModule } from './support/node-runtime.js';
import { buildCommit } from './support/commit-build.js';
import type {
  DecisionServiceProcessMessage,
  DecisionServiceProcessStart,
} from './support/decision-service-process.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER } from '../dev/tokens/dev-token.js';
import type { DevSigningKey } from '../dev/tokens/dev-signing-key.js';

const OPTIONS = {
  requests: { type: 'string', default: '20000' },
  concurrency: { type: 'string', default: '16' },
  rounds: { type: 'string', default: '3' },
  /** `compiled` (the JavaScript tsc emits, as the image runs it) or `tsx` (the sources through tsx's loader). */
  runtime: { type: 'string', default: 'compiled' },
  /** A commit to compare the working tree with (built side by side); empty: the rows below. */
  against: { type: 'string', default: '' },
} as const;

/** A check of an item id with characters to escape (a URN), as enforcement points send them. */
const CHECK_BODY = JSON.stringify({
  subject_type: 'user',
  subject_id: randomUUID(),
  resource_type: 'resource',
  resource_id: 'urn:dx:item:bench-overhead',
  relation: 'api',
});

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  distinctSubjects?: boolean;
  /** Measured with tracing on, exporting to the local receiver. */
  traced?: boolean;
}

interface Measure {
  requestsPerSecond: number;
  serverCpuMicros: number;
  clientCpuMicros: number;
}

/** Answers every request with `answer` once its JSON body is read and parsed: HTTP and nothing else. */
function fixedAnswer(answer: string): RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(answer),
        'x-request-id': randomUUID(),
      });
      res.end(answer);
    });
  };
}

async function serveWithNode(listener: RequestListener): Promise<{ url: string; server: Server }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** An OTLP/HTTP receiver that reads every export and answers it empty, as a collector that accepts all. */
async function startOtlpReceiver(): Promise<{ url: string; server: Server; exports: () => number }> {
  let exports = 0;
  const receiver = await serveWithNode((req, res) => {
    req.resume();
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
      res.end();
    });
  });
  return { ...receiver, exports: () => exports };
}

/** Runs `work` with tracing on (every span sampled, exported to `endpoint` in batches), then turns it off. */
async function whileTraced<T>(endpoint: string, work: () => Promise<T>): Promise<T> {
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${endpoint}/v1/traces`;
  const tracing: RunningTracing = startTracing({
    serviceName: 'bench-check-overhead',
    sampler: { kind: 'always_on' },
  });
  try {
    return await work();
  } finally {
    await tracing.shutdown();
  }
}

function startLoad(): ChildProcess {
  const load = siblingModule(import.meta.url, 'support/http-load.ts');
  return fork(load.path, { execArgv: load.execArgv });
}

/** This process's CPU time in µs. */
async function ownCpuMicros(): Promise<number> {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function measure(
  child: ChildProcess,
  target: Target,
  concurrency: number,
  requests: number,
  serverCpuMicros: () => Promise<number> = ownCpuMicros,
): Promise<Measure> {
  const request: HttpLoadRequest = {
    url: `${target.url}/v1/check`,
    headers: { 'content-type': 'application/json', ...target.headers },
    body: CHECK_BODY,
    distinctSubjects: target.distinctSubjects ?? false,
    concurrency,
    requests,
  };
  return serverCpuMicros().then(
    (cpuBefore) =>
      new Promise((resolve, reject) => {
        child.once('message', (result: HttpLoadResult) => {
          if (result.failed > 0) reject(new Error(`${target.name}: ${result.failed} requests failed`));
          void serverCpuMicros().then((cpuAfter) =>
            resolve({
              requestsPerSecond: (requests / result.elapsedMs) * 1000,
              serverCpuMicros: (cpuAfter - cpuBefore) / requests,
              clientCpuMicros: result.clientCpuMicros,
            }),
          );
        });
        child.send(request);
      }),
  );
}

/** A decision service in a process of its own: its URL, its CPU time, and how to stop it. */
interface ServiceProcess {
  url: string;
  cpuMicros(): Promise<number>;
  stop(): void;
}

async function startServiceProcess(
  entry: { path: string; execArgv: string[] },
  start: DecisionServiceProcessStart,
): Promise<ServiceProcess> {
  const child = fork(entry.path, { execArgv: [...entry.execArgv, '--enable-source-maps'] });
  const next = () =>
    new Promise<DecisionServiceProcessMessage>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`${entry.path} exited with ${code}`));
      child.once('exit', exited);
      child.once('message', (message: DecisionServiceProcessMessage) => {
        child.off('exit', exited);
        resolve(message);
      });
    });
  const started = next();
  child.send(start);
  const answer = await started;
  if (!('url' in answer)) throw new Error(`${entry.path} did not start`);
  return {
    url: answer.url,
    cpuMicros: async () => {
      const reply = next();
      child.send('cpu');
      const cpu = await reply;
      if (!('cpuMicros' in cpu)) throw new Error(`${entry.path} did not tell its CPU time`);
      return cpu.cpuMicros;
    },
    stop: () => child.send('exit'),
  };
}

/** Until the service at `url` answers the check (SpiceDB's schema snapshot and the barrier ready). */
async function untilAnswering(url: string, authorization: string): Promise<string> {
  let answer = '';
  await until(
    async () => {
      const response = await fetch(`${url}/v1/check`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: CHECK_BODY,
      });
      answer = await response.text();
      return response.status === 200;
    },
    'the decision service to answer the check',
    60_000,
    100,
  );
  return answer;
}

/** Requests a minute the check class admits in the service processes: the limiter runs, and admits all. */
const UNREACHED_CHECK_LIMIT = 100_000_000;

/**
 * The working tree's decision service against `commit`'s, each in a process of its own on one SpiceDB, the same
 * load alternating between them; prints each side's CPU per check and the ratio.
 */
async function compareWithCommit(
  commit: string,
  { requests, concurrency, rounds }: { requests: number; concurrency: number; rounds: number },
  stopping: Array<() => Promise<unknown> | unknown>,
  spicedb: { endpoint: string; token: string },
  key: DevSigningKey,
): Promise<void> {
  const source = 'bench/support/decision-service-process.ts';
  const built = await buildCommit(commit, source);
  const start: DecisionServiceProcessStart = {
    spicedb,
    jwks: key.jwks,
    issuer: DEV_TOKEN_ISSUER,
    audience: DEV_TOKEN_AUDIENCE,
    checkLimit: UNREACHED_CHECK_LIMIT,
  };
  const sides = [
    { name: 'working tree', entry: siblingModule(import.meta.url, 'support/decision-service-process.ts') },
    { name: built.commit.slice(0, 12), entry: { path: built.entry, execArgv: [] } },
  ];
  const services = new Map<string, ServiceProcess>();
  for (const side of sides) {
    const service = await startServiceProcess(side.entry, start);
    stopping.unshift(() => service.stop());
    services.set(side.name, service);
  }
  const authorization = `Bearer ${await mintToken(key, { sub: randomUUID(), roles: [DECISION_CLIENT_ROLE] })}`;
  for (const service of services.values()) await untilAnswering(service.url, authorization);
  const kinds = [
    { name: 'answered from memory', distinctSubjects: false },
    { name: 'asked of SpiceDB (every check a new subject)', distinctSubjects: true },
  ];
  const child = startLoad();
  stopping.unshift(() => child.send('exit'));
  const run = (side: string, kind: (typeof kinds)[number], count: number) => {
    const service = services.get(side) as ServiceProcess;
    const target = {
      name: `${side}, ${kind.name}`,
      url: service.url,
      headers: { authorization },
      distinctSubjects: kind.distinctSubjects,
    };
    return measure(child, target, concurrency, count, () => service.cpuMicros());
  };
  console.log(
    `the working tree against ${built.commit}: each run ${requests} requests, ${concurrency} in flight; ${rounds} rounds, the sides alternating; medians`,
  );
  for (const side of sides) for (const kind of kinds) await run(side.name, kind, Math.min(requests, 5000));
  const results = new Map<string, Measure[]>();
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const kind of kinds) {
      for (const side of order) {
        const key = `${side.name} ${kind.name}`;
        results.set(key, [...(results.get(key) ?? []), await run(side.name, kind, requests)]);
      }
    }
  }
  const [tree, other] = sides.map((side) => side.name) as [string, string];
  const medianOf = (side: string, kind: string, pick: (measure: Measure) => number) =>
    median((results.get(`${side} ${kind}`) ?? []).map(pick));
  printTable(
    [
      'check',
      'working tree: service CPU µs per check',
      `${other}: service CPU µs per check`,
      'ratio',
      'working tree: checks/s',
      `${other}: checks/s`,
    ],
    kinds.map(({ name }) => {
      const cpu = [tree, other].map((side) => medianOf(side, name, (m) => m.serverCpuMicros)) as [
        number,
        number,
      ];
      const rate = [tree, other].map((side) => medianOf(side, name, (m) => m.requestsPerSecond));
      return [
        name,
        cpu[0].toFixed(0),
        cpu[1].toFixed(0),
        (cpu[0] / cpu[1]).toFixed(2),
        ...rate.map((value) => value.toFixed(0)),
      ];
    }),
  );
}

async function main(): Promise<void> {
  const options = parseArgs({ options: OPTIONS }).values;
  if (await runCompiled(import.meta.url, parseNodeRuntime(options.runtime))) return;
  const [requests, concurrency, rounds] = [options.requests, options.concurrency, options.rounds].map(
    Number,
  ) as [number, number, number];
  const stateDir = await mkdtemp(join(tmpdir(), 'bench-check-overhead-'));
  const stopping: Array<() => Promise<unknown> | unknown> = [
    () => rm(stateDir, { recursive: true, force: true }),
  ];
  try {
    const { server: spicedb, client: schemaClient } = await startBenchSpiceDB(stateDir);
    stopping.unshift(() => spicedb.process.stop());
    schemaClient.close();

    const { key, bearer } = await devBearer(stateDir);
    if (options.against !== '') {
      const spicedbAddress = { endpoint: spicedb.endpoint, token: spicedb.token };
      await compareWithCommit(
        options.against,
        { requests, concurrency, rounds },
        stopping,
        spicedbAddress,
        key,
      );
      return;
    }
    const service = await startDecisionService(
      {
        port: 0,
        host: '127.0.0.1',
        spicedb: { endpoint: spicedb.endpoint, token: spicedb.token, transport: 'plaintext' },
      },
      {
        authenticators: { bearer },
        // Production's level; the lines are formatted as in production, then dropped.
        logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
      },
    );
    stopping.unshift(() => service.stop());
    const authorization = `Bearer ${await mintToken(key, { sub: randomUUID(), roles: [DECISION_CLIENT_ROLE] })}`;
    const answer = await untilAnswering(service.url, authorization);

    const app = express();
    app.disable('x-powered-by');
    app.use(fixedAnswer(answer));
    const bare = await serveWithNode(fixedAnswer(answer));
    const expressPerRequest = await serveWithNode(app);
    const expressBorn = await listen(app, { port: 0, host: '127.0.0.1', closeGraceMs: 100 });
    stopping.unshift(
      () => bare.server.close(),
      () => expressPerRequest.server.close(),
      () => expressBorn.close(),
    );

    const targets: Target[] = [
      { name: "node's HTTP server, fixed answer", url: bare.url, headers: {} },
      {
        name: 'express, prototypes set per request (app.listen), fixed answer',
        url: expressPerRequest.url,
        headers: {},
      },
      {
        name: 'express, born with its prototypes (this project), fixed answer',
        url: expressBorn.url,
        headers: {},
      },
      { name: 'decision service, check answered from memory', url: service.url, headers: { authorization } },
      {
        name: 'decision service, every check a new subject (asked of SpiceDB)',
        url: service.url,
        headers: { authorization },
        distinctSubjects: true,
      },
    ];
    const receiver = await startOtlpReceiver();
    stopping.unshift(() => receiver.server.close());
    targets.splice(4, 0, {
      name: 'decision service, check answered from memory, tracing on (OTLP to a local receiver)',
      url: service.url,
      headers: { authorization },
      traced: true,
    });
    const run = (target: Target, count: number) =>
      target.traced
        ? whileTraced(receiver.url, () => measure(child, target, concurrency, count))
        : measure(child, target, concurrency, count);
    const child = startLoad();
    stopping.unshift(() => child.send('exit'));
    console.log(
      `each run: ${requests} requests, ${concurrency} in flight; ${rounds} rounds, the targets in turn (order rotating); medians`,
    );
    for (const target of targets) await run(target, Math.min(requests, 5000));
    const results = new Map<string, Measure[]>(targets.map((target) => [target.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (let step = 0; step < targets.length; step++) {
        const target = targets[(round + step) % targets.length] as Target;
        results.get(target.name)?.push(await run(target, requests));
      }
    }
    report(targets, results);
    console.log(`the OTLP receiver took ${receiver.exports()} exports`);
  } finally {
    for (const stop of stopping) await stop();
  }
}

function report(targets: Target[], results: Map<string, Measure[]>): void {
  const medians = targets.map((target) => {
    const runs = results.get(target.name) ?? [];
    return {
      name: target.name,
      requestsPerSecond: median(runs.map((run) => run.requestsPerSecond)),
      serverCpuMicros: median(runs.map((run) => run.serverCpuMicros)),
      clientCpuMicros: median(runs.map((run) => run.clientCpuMicros)),
    };
  });
  const baseline = medians[0]?.serverCpuMicros ?? 1;
  printTable(
    ['server', 'requests/s', 'server CPU µs per request', 'ratio to node', 'client CPU µs per request'],
    medians.map((row) => [
      row.name,
      row.requestsPerSecond.toFixed(0),
      row.serverCpuMicros.toFixed(0),
      (row.serverCpuMicros / baseline).toFixed(2),
      row.clientCpuMicros.toFixed(0),
    ]),
  );
}

await main();
