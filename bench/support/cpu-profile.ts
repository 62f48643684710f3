// A CPU profile of this process's main thread (V8's sampling profiler through the inspector), and the time of
// its samples by stage of a check: where each microsecond of the decision service goes.
import { Session } from 'node:inspector/promises';
import type { Profiler } from 'node:inspector';

/** Starts sampling (every `intervalUs`); the returned function stops and hands back the profile. */
export async function startCpuProfile(intervalUs = 200): Promise<() => Promise<Profiler.Profile>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    return profile;
  };
}

/**
 * A stage of a check and the frames that are its work, by script URL. A weak rule (node's own modules) names a
 * sample's stage only when no other rule matches a frame of its stack.
 */
export interface StageRule {
  stage: string;
  url: RegExp;
  weak?: boolean;
}

const PROJECT = (files: string) => new RegExp(`/(src|dist)/.*(${files})\\.js$`);

/**
 * The stages of a check. A sample is charged to the stage of the frame nearest the sampled one that a rule
 * matches (frames of libraries and of V8's builtins belong to the project's frame that called them); node's
 * own HTTP and stream modules count only where no project or library frame is on the stack (parsing a request,
 * reading and writing sockets).
 */
export const CHECK_STAGES: readonly StageRule[] = [
  { stage: 'failed-authentication limiter', url: PROJECT('rate-limit/failed-authentication-limit') },
  { stage: 'rate limit', url: /(\/rate-limit\/subject-rate-limit\.js|\/express-rate-limit\/)/ },
  {
    stage: 'authentication and its caches',
    url: /(\/auth\/[^/]+\.js|\/auth-middleware\.js|\/caller-authentication\.js|\/token-issuers\.js|\/client-address\.js|\/jose\/)/,
  },
  {
    stage: 'request context, spans, access log, HTTP metrics',
    url: /(\/request-context\.js|\/request-span\.js|\/observability\/|\/access-log\.js|\/http-metrics\.js|\/route-template\.js|\/prom-client\/|\/@opentelemetry\/|\/pino\/)/,
  },
  {
    stage: 'decision cache and revision barrier',
    url: PROJECT(
      'decision/(decision-cache|decision-cache-metrics|revision-[^/]+|relationship-expiries|delivered-revisions|consistency-choice)',
    ),
  },
  {
    stage: 'SpiceDB call',
    url: /(\/check-batcher\.js|\/check-batch-metrics\.js|\/spicedb\/client\.js|\/spicedb\/errors\.js|\/@grpc\/|\/@protobuf-ts\/|\/@authzed\/|\/google-protobuf\/|^node:(internal\/)?http2)/,
  },
  {
    stage: 'validation',
    url: /(\/json-body\.js|\/plain-json-body\.js|\/validation\.js|\/zod\/|\/spicedb\/registry\.js|\/spicedb\/object-id\.js|\/check-request\.js|\/raw-body\/|\/body-parser\/|\/content-type\/|\/type-is\/|\/media-typer\/|\/iconv-lite\/)/,
  },
  {
    stage: 'evaluation (route handler, scope, AuthZEN mapping)',
    url: PROJECT(
      'decision/(check-route|check-evaluator|organisation-scope|check-callers|decision-metrics|authzen/[^/]+)',
    ),
  },
  {
    stage: 'answer',
    url: /(\/hot-route\.js|\/envelope\.js|\/route-router\.js|\/errors\.js|\/error-handler\.js)/,
  },
  {
    stage: 'routing',
    url: /(\/hot-route-layer\.js|\/handler-chain\.js|\/fail-closed\.js|\/express\/|\/router\/|\/finalhandler\/|\/http\/app\.js|\/express-messages\.js|\/http\/server\.js)/,
  },
  { stage: 'answer', url: /^node:_http_outgoing/, weak: true },
  { stage: 'HTTP parse and sockets', url: /^node:/, weak: true },
];

const SPECIAL = new Map([
  ['(garbage collector)', 'garbage collection'],
  ['(idle)', 'idle'],
  ['(program)', 'V8 and native (program)'],
]);

/** Microseconds of samples per stage (`other` for stacks no rule names), idle left out. */
export function timeByStage(profile: Profiler.Profile, rules: readonly StageRule[]): Map<string, number> {
  const parents = new Map<number, number>();
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const ruleOf = (id: number) => {
    const url = nodes.get(id)?.callFrame.url ?? '';
    return url === '' ? undefined : rules.find((rule) => rule.url.test(url));
  };
  const stageOf = new Map<number, string>();
  const classify = (leaf: number): string => {
    const known = stageOf.get(leaf);
    if (known !== undefined) return known;
    const special = SPECIAL.get(nodes.get(leaf)?.callFrame.functionName ?? '');
    let stage = special;
    let weak: string | undefined;
    for (let id: number | undefined = leaf; stage === undefined && id !== undefined; id = parents.get(id)) {
      const rule = ruleOf(id);
      if (rule?.weak) weak ??= rule.stage;
      else if (rule) stage = rule.stage;
    }
    stageOf.set(leaf, (stage ??= weak ?? 'other'));
    return stage;
  };
  const totals = new Map<string, number>();
  const { samples = [], timeDeltas = [] } = profile;
  samples.forEach((id, index) => {
    const stage = classify(id);
    // A sample's time is the delta to the next one.
    const delta = timeDeltas[index + 1] ?? 0;
    if (stage !== 'idle') totals.set(stage, (totals.get(stage) ?? 0) + delta);
  });
  return totals;
}
