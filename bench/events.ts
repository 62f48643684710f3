import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GROUP_VERSION,
  MEMBERSHIP_KIND,
  membershipName,
  type Membership,
  type MembershipKey,
} from '../src/api/v1alpha1/index.js';
import { settleAll, valuesOrThrow } from '../src/acl/concurrency.js';
import { KubeClient } from '../src/kube/kube-client.js';
import { loadKubeConfig } from '../src/kube/kube-config.js';
import { ACL_API_FIELD_MANAGER } from '../src/audit/field-managers.js';
import { isNotFound } from '../src/kube/api-error.js';
import { paths } from '../src/acl/resources.js';
import { ensureDevSigningKey } from '../dev/tokens/dev-signing-key.js';
import { mintToken } from '../dev/tokens/dev-token.js';
import { DECISION_CLIENT_ROLE } from '../src/config/decision-clients.js';
import { startDevStack } from '../dev/stack/dev-stack.js';
import { percentile } from './support/statistics.js';
import { until } from '../dev/wait/until.js';

// npm run bench:events — membership events applied per second through POST /events, one event per request
// (BENCH_EVENTS, default 500, BENCH_CONCURRENCY requests in flight, default 16) and in batches of 100
// (BENCH_BATCHES, default 10, one batch at a time: the API writes 16 memberships of a batch at once), against
// raw Membership creates over a keep-alive pool (BENCH_EVENTS, BENCH_CONCURRENCY in flight) in the same run.
// Then, when the controller projects memberships: from an org.member.added event answered 200 to /v1/check
// allowing a GROUP grant to the organisation, no token, p50/p99 over BENCH_SAMPLES users (default 50, one
// at a time). Loopback only; it starts and stops its own development stack.

const EVENTS = Number(process.env.BENCH_EVENTS ?? 500);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 10);
const BATCH_SIZE = 100;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 50);
const POLL_MS = 10;
const GIVE_UP_MS = 30_000;
/** How long the first membership may take to show the controller's status before the latency part gives up. */
const PROJECTION_PROBE_MS = 60_000;

interface Context {
  acl: string;
  decision: string;
  producerToken: string;
  ownerToken: string;
  /** An enforcement point's: checks. */
  checkerToken: string;
  itemId: string;
  kube: KubeClient;
  namespace: string;
}

async function main(): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-bench-events-'));
  const { KUBECONFIG: _cluster, ...inherited } = process.env;
  const env = { ...inherited, ACL_PORT: '0', DECISION_PORT: '0', CONTROLLER_PORT: '0', LOG_LEVEL: 'error' };
  console.error('starting the development stack…');
  const stack = await startDevStack({ stateDir, env, log: () => undefined });
  const kubeConfig = loadKubeConfig(stack.env.KUBECONFIG);
  // Writes as the ACL API does: under its field manager.
  const kube = new KubeClient(kubeConfig, { fieldManager: ACL_API_FIELD_MANAGER });
  try {
    const item = stack.sampleItem?.spec;
    if (!item) throw new Error('no sample CatalogItem in config/samples');
    const key = await ensureDevSigningKey(stateDir);
    const ctx: Context = {
      acl: stack.env.ACL_URL,
      decision: stack.env.DECISION_URL,
      producerToken: await mintToken(key, {
        sub: randomUUID(),
        roles: ['event_producer'],
        ttlSeconds: 3_600,
      }),
      ownerToken: await mintToken(key, { sub: item.ownerId, ttlSeconds: 3_600 }),
      checkerToken: await mintToken(key, {
        sub: randomUUID(),
        roles: [DECISION_CLIENT_ROLE],
        ttlSeconds: 3_600,
      }),
      itemId: item.itemId,
      kube,
      namespace: stack.env.NAMESPACE,
    };
    await throughput(ctx);
    await latency(ctx);
  } finally {
    kube.close();
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

function orgAdded(key: MembershipKey, time = new Date()) {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: '//bench/events',
    time: time.toISOString(),
    type: 'org.member.added',
    data: { organisationId: key.organisationId, userId: key.userId },
  };
}

const freshKey = (organisationId = randomUUID()): MembershipKey => ({ organisationId, userId: randomUUID() });

async function timed(label: string, count: number, run: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1_000;
  console.error(`  ${label}: ${count} in ${seconds.toFixed(2)} s`);
  return count / seconds;
}

async function postEvents(ctx: Context, events: unknown, mediaType: string): Promise<void> {
  const response = await fetch(`${ctx.acl}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.producerToken}`, 'content-type': mediaType },
    body: JSON.stringify(events),
  });
  const body = (await response.json()) as { results?: { outcome: string }[] };
  if (response.status !== 200 || body.results?.some((result) => result.outcome !== 'applied')) {
    throw new Error(`POST /events answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
}

async function rawCreates(ctx: Context, count: number): Promise<void> {
  const keys = Array.from({ length: count }, () => freshKey());
  valuesOrThrow(
    await settleAll(keys, CONCURRENCY, (key) =>
      ctx.kube.call({
        method: 'POST',
        path: paths.memberships(ctx.namespace),
        body: {
          apiVersion: GROUP_VERSION,
          kind: MEMBERSHIP_KIND,
          metadata: { name: membershipName(key) },
          spec: { ...key, changedAt: new Date().toISOString() },
        },
      }),
    ),
  );
}

async function singleEvents(ctx: Context, count: number): Promise<void> {
  const events = Array.from({ length: count }, () => orgAdded(freshKey()));
  valuesOrThrow(
    await settleAll(events, CONCURRENCY, (event) => postEvents(ctx, event, 'application/cloudevents+json')),
  );
}

async function batches(ctx: Context, count: number): Promise<void> {
  for (let batch = 0; batch < count; batch++) {
    const events = Array.from({ length: BATCH_SIZE }, () => orgAdded(freshKey()));
    await postEvents(ctx, events, 'application/cloudevents-batch+json');
  }
}

async function throughput(ctx: Context): Promise<void> {
  console.error('throughput (warm-up first):');
  await rawCreates(ctx, 20);
  await singleEvents(ctx, 20);
  const raw = await timed(`raw Membership creates, ${CONCURRENCY} in flight`, EVENTS, () =>
    rawCreates(ctx, EVENTS),
  );
  const single = await timed(`single events, ${CONCURRENCY} requests in flight`, EVENTS, () =>
    singleEvents(ctx, EVENTS),
  );
  const batched = await timed(`batches of ${BATCH_SIZE}, one at a time`, BATCHES * BATCH_SIZE, () =>
    batches(ctx, BATCHES),
  );
  const rows: [string, string][] = [
    ['raw Membership creates (keep-alive pool)', `${raw.toFixed(0)} /s`],
    ['POST /events, one event per request', `${single.toFixed(0)} events/s`],
    [`POST /events, batches of ${BATCH_SIZE}`, `${batched.toFixed(0)} events/s`],
    ['ratio single / raw', (single / raw).toFixed(2)],
    ['ratio batch / raw', (batched / raw).toFixed(2)],
  ];
  console.log('| measure | value |\n| --- | --- |');
  for (const [measure, value] of rows) console.log(`| ${measure} | ${value} |`);
}

async function latency(ctx: Context): Promise<void> {
  const organisationId = randomUUID();
  await grantToOrganisation(ctx, organisationId);
  const probe = freshKey(organisationId);
  await postEvents(ctx, orgAdded(probe), 'application/cloudevents+json');
  const allowed = await checkUntil(ctx, probe.userId, PROJECTION_PROBE_MS);
  if (!allowed) {
    const membership = await readMembership(ctx, probe);
    if (membership?.status?.conditions === undefined) {
      console.log(
        `\nevent → /v1/check allowed: skipped: the controller does not project memberships (Membership ` +
          `${membershipName(probe)} has no status ${PROJECTION_PROBE_MS / 1_000} s after its event)`,
      );
      return;
    }
    throw new Error(
      `the controller reports the membership (${JSON.stringify(membership.status)}) but the check denies`,
    );
  }
  const durations: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample++) {
    const key = freshKey(organisationId);
    await postEvents(ctx, orgAdded(key), 'application/cloudevents+json');
    const answered = performance.now();
    if (!(await checkUntil(ctx, key.userId, GIVE_UP_MS))) throw new Error(`user ${key.userId} never allowed`);
    durations.push(performance.now() - answered);
  }
  durations.sort((a, b) => a - b);
  const ms = (p: number) => `${percentile(durations, p).toFixed(0)} ms`;
  console.log(
    `\nevent answered 200 → /v1/check allows (GROUP grant, no token, polling every ${POLL_MS} ms): ` +
      `n ${SAMPLES}, p50 ${ms(50)}, p99 ${ms(99)}`,
  );
}

async function grantToOrganisation(ctx: Context, organisationId: string): Promise<void> {
  const grant = {
    policyType: 'GROUP',
    itemId: ctx.itemId,
    itemType: 'DATABANK',
    expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
    constraints: { access: [{ accessType: 'api' }], subjects: { allowedOrgIds: [organisationId] } },
  };
  const response = await fetch(`${ctx.acl}/policy`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${ctx.ownerToken}`,
      'content-type': 'application/json',
      prefer: 'wait=30',
    },
    body: JSON.stringify({ request: [grant] }),
  });
  if (response.status !== 201)
    throw new Error(`GROUP grant answered ${response.status}: ${await response.text()}`);
}

async function readMembership(ctx: Context, key: MembershipKey): Promise<Membership | undefined> {
  try {
    return await ctx.kube.call<Membership>({
      method: 'GET',
      path: paths.membership(ctx.namespace, membershipName(key)),
    });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Polls the check until it allows; false when `giveUpMs` passes first. */
async function checkUntil(ctx: Context, userId: string, giveUpMs: number): Promise<boolean> {
  const gaveUp = new Error(`the check did not allow ${userId} within ${giveUpMs} ms`);
  return until(
    () => check(ctx, userId),
    () => gaveUp,
    giveUpMs,
    POLL_MS,
  ).then(
    () => true,
    (error: unknown) => {
      if (error === gaveUp) return false;
      throw error;
    },
  );
}

async function check(ctx: Context, userId: string): Promise<boolean> {
  const response = await fetch(`${ctx.decision}/v1/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.checkerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      subject_type: 'user',
      subject_id: userId,
      organisation_id: '',
      resource_type: 'resource',
      resource_id: ctx.itemId,
      relation: 'api',
    }),
  });
  const body = (await response.json()) as { detail?: string; result?: { allowed?: boolean } };
  if (response.status !== 200) throw new Error(`check answered ${response.status}: ${body.detail ?? ''}`);
  return body.result?.allowed === true;
}

await main();
