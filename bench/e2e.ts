import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { ensureDevSigningKey } from '../dev/tokens/dev-signing-key.js';
import { mintToken } from '../dev/tokens/dev-token.js';
import { DECISION_CLIENT_ROLE } from '../src/config/decision-clients.js';
import { startDevStack } from '../dev/stack/dev-stack.js';
import { percentile } from './support/statistics.js';
import { until } from '../dev/wait/until.js';

// npm run bench:e2e — how long a grant takes to reach the hot path, from outside, over BENCH_GRANTS grants
// (default 200) for each way of asking, BENCH_CONCURRENCY lifecycles at a time (default 4: a steady pace, not a
// burst). Without `Prefer: wait`: from POST /policy answering 201 to /v1/check allowing, and from DELETE
// /policy answering to /v1/check denying, polling. With `Prefer: wait`: the whole call plus the first check,
// which carries no token (the revision barrier must make it right) — and a second check with the returned
// ZedToken. Counts first checks that answered wrong (an allow after a revocation answered with Prefer: wait
// must never happen). Loopback only; it starts and stops its own stack. On the production topology
// (`SPICEDB_DATASTORE=postgres DEV_DECISION_REPLICAS=3`: SpiceDB on PostgreSQL, the decision replicas on a
// read-only SpiceDB), every check is asked of every replica, and each replica gets rows of its own.

const GRANTS = Number(process.env.BENCH_GRANTS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const POLL_MS = 25;
const GIVE_UP_MS = 30_000;

interface Stack {
  acl: string;
  /** Every decision replica: each check goes to each. */
  decisions: string[];
  /** The item owner's: grants and revokes. */
  token: string;
  /** An enforcement point's: checks. */
  checkerToken: string;
  itemId: string;
}

/** Per replica, in the stack's order. */
interface Timings {
  toAllow: number[][];
  toDeny: number[][];
  /** First checks that answered wrong: denied after a grant, allowed after a revocation. */
  wrongAfterGrant: number[];
  wrongAfterRevocation: number[];
}

/** Per replica, in the stack's order. */
interface Lifecycle {
  toAllow: number[];
  toDeny: number[];
  wrongAfterGrant: boolean[];
  wrongAfterRevocation: boolean[];
}

async function main(): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-bench-e2e-'));
  // Always its own local stack, whatever the shell points at.
  const { KUBECONFIG: _cluster, ...inherited } = process.env;
  const env = { ...inherited, ACL_PORT: '0', DECISION_PORT: '0', CONTROLLER_PORT: '0', LOG_LEVEL: 'error' };
  const stack = await startDevStack({ stateDir, env, log: () => undefined });
  try {
    const item = stack.sampleItem?.spec;
    if (!item) throw new Error('no sample CatalogItem in config/samples');
    const key = await ensureDevSigningKey(stateDir);
    const context: Stack = {
      acl: stack.env.ACL_URL,
      decisions: stack.decisionUrls,
      token: await mintToken(key, { sub: item.ownerId, ttlSeconds: 3_600 }),
      checkerToken: await mintToken(key, {
        sub: randomUUID(),
        roles: [DECISION_CLIENT_ROLE],
        ttlSeconds: 3_600,
      }),
      itemId: item.itemId,
    };
    const polled = await measure(context, GRANTS, (ctx) => lifecycleByPolling(ctx));
    const waited = await measure(context, GRANTS, (ctx) => lifecycleWithWait(ctx));
    report(polled, waited);
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function measure(ctx: Stack, count: number, one: (ctx: Stack) => Promise<Lifecycle>) {
  const perReplica = <T>(make: () => T) => ctx.decisions.map(make);
  const timings: Timings = {
    toAllow: perReplica(() => []),
    toDeny: perReplica(() => []),
    wrongAfterGrant: perReplica(() => 0),
    wrongAfterRevocation: perReplica(() => 0),
  };
  await pLimit(CONCURRENCY).map([...Array(count).keys()], async () => {
    const lifecycle = await one(ctx);
    ctx.decisions.forEach((_url, replica) => {
      timings.toAllow[replica]?.push(lifecycle.toAllow[replica] ?? NaN);
      timings.toDeny[replica]?.push(lifecycle.toDeny[replica] ?? NaN);
      if (lifecycle.wrongAfterGrant[replica])
        timings.wrongAfterGrant[replica] = (timings.wrongAfterGrant[replica] ?? 0) + 1;
      if (lifecycle.wrongAfterRevocation[replica])
        timings.wrongAfterRevocation[replica] = (timings.wrongAfterRevocation[replica] ?? 0) + 1;
    });
  });
  return timings;
}

/** Milliseconds from `since` until each replica's check answers `expected`, polling each. */
function untilEveryReplica(
  ctx: Stack,
  consumer: string,
  expected: boolean,
  since: number,
): Promise<number[]> {
  return Promise.all(
    ctx.decisions.map(async (decision) => {
      await checkUntil(ctx, decision, consumer, expected);
      return performance.now() - since;
    }),
  );
}

/** A client without a token: create, then check until allowed; revoke, then check until denied. */
async function lifecycleByPolling(ctx: Stack): Promise<Lifecycle> {
  const consumer = randomUUID();
  const { policyId } = await createGrant(ctx, consumer, {});
  const toAllow = await untilEveryReplica(ctx, consumer, true, performance.now());
  await revokeGrant(ctx, policyId, {});
  const toDeny = await untilEveryReplica(ctx, consumer, false, performance.now());
  const never = ctx.decisions.map(() => false);
  return { toAllow, toDeny, wrongAfterGrant: never, wrongAfterRevocation: never };
}

/**
 * A client that asks to read its grant: the answer comes once enforced; then one check without a token, which
 * must already be right (else it polls, and counts it), and one with the returned token, which must be right.
 */
async function lifecycleWithWait(ctx: Stack): Promise<Lifecycle> {
  const consumer = randomUUID();
  const started = performance.now();
  const created = await createGrant(ctx, consumer, { prefer: 'wait=30' });
  const afterGrant = await firstChecks(ctx, consumer, true, started, created.zedToken);
  const revoking = performance.now();
  const revoked = await revokeGrant(ctx, created.policyId, { prefer: 'wait=30' });
  const afterRevocation = await firstChecks(ctx, consumer, false, revoking, revoked.zedToken);
  return {
    toAllow: afterGrant.map(({ took }) => took),
    toDeny: afterRevocation.map(({ took }) => took),
    wrongAfterGrant: afterGrant.map(({ wrong }) => wrong),
    wrongAfterRevocation: afterRevocation.map(({ wrong }) => wrong),
  };
}

/**
 * On each replica: one check without a token, which must already answer `expected` (else it polls, and counts
 * it), then one with the answer's token, which must.
 */
function firstChecks(ctx: Stack, consumer: string, expected: boolean, since: number, token?: string) {
  return Promise.all(
    ctx.decisions.map(async (decision) => {
      const wrong = (await check(ctx, decision, consumer)) !== expected;
      if (wrong) await checkUntil(ctx, decision, consumer, expected);
      const took = performance.now() - since;
      if ((await check(ctx, decision, consumer, token)) !== expected)
        throw new Error(`${decision}: not ${expected} with the token`);
      return { took, wrong };
    }),
  );
}

interface Report {
  policyId: string;
  zedToken?: string;
}

async function createGrant(ctx: Stack, consumer: string, headers: Record<string, string>): Promise<Report> {
  const body = {
    request: [
      {
        policyType: 'INDIVIDUAL',
        userId: consumer,
        itemId: ctx.itemId,
        itemType: 'DATABANK',
        expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
        constraints: { access: [{ accessType: 'api' }] },
      },
    ],
  };
  const answer = await call(`${ctx.acl}/policy`, 'POST', ctx.token, body, headers);
  if (answer.status !== 201)
    throw new Error(`create answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return (answer.body.results as Report[])[0] as Report;
}

async function revokeGrant(ctx: Stack, policyId: string, headers: Record<string, string>): Promise<Report> {
  const answer = await call(`${ctx.acl}/policy?id=${policyId}`, 'DELETE', ctx.token, undefined, headers);
  if (answer.status !== 200) throw new Error(`delete answered ${answer.status}`);
  return ((answer.body.results as Report[] | undefined) ?? [{ policyId }])[0] as Report;
}

async function checkUntil(ctx: Stack, decision: string, consumer: string, expected: boolean): Promise<void> {
  const agrees = async () => (await check(ctx, decision, consumer)) === expected;
  await until(agrees, `the check to become ${expected}`, GIVE_UP_MS, POLL_MS);
}

async function check(
  ctx: Stack,
  decision: string,
  consumer: string,
  token?: string,
): Promise<boolean | undefined> {
  const body = {
    subject_type: 'user',
    subject_id: consumer,
    organisation_id: '',
    resource_type: 'resource',
    resource_id: ctx.itemId,
    relation: 'api',
    ...(token ? { consistency_token: token } : {}),
  };
  const answer = await call(`${decision}/v1/check`, 'POST', ctx.checkerToken, body, {});
  return (answer.body.result as { allowed?: boolean } | undefined)?.allowed;
}

async function call(
  url: string,
  method: string,
  token: string,
  body: unknown,
  headers: Record<string, string>,
) {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function report(polled: Timings, waited: Timings): void {
  const row = (name: string, values: number[], wrong: number | string) => {
    const sorted = [...values].sort((a, b) => a - b);
    const ms = (p: number) => `${percentile(sorted, p).toFixed(0)} ms`.padStart(9);
    return `${name.padEnd(62)} ${String(values.length).padStart(5)} ${ms(50)} ${ms(99)} ${String(wrong).padStart(11)}`;
  };
  const replicas = polled.toAllow.length;
  console.log(
    `concurrency ${CONCURRENCY}; no check carries a token unless it says so; ${replicas} decision replica(s)`,
  );
  console.log(
    `${'measure'.padEnd(62)} ${'n'.padStart(5)} ${'p50'.padStart(9)} ${'p99'.padStart(9)} ${'wrong first'.padStart(11)}`,
  );
  for (let replica = 0; replica < replicas; replica++) {
    const on = replicas > 1 ? `replica ${replica + 1}: ` : '';
    const at = <T>(values: T[]) => values[replica] as T;
    console.log(row(`${on}201 → check allows (polling)`, at(polled.toAllow), '-'));
    console.log(row(`${on}DELETE answered 200 → check denies (polling)`, at(polled.toDeny), '-'));
    console.log(
      row(`${on}POST with Prefer: wait → first check allows`, at(waited.toAllow), at(waited.wrongAfterGrant)),
    );
    console.log(
      row(
        `${on}DELETE with Prefer: wait → first check denies`,
        at(waited.toDeny),
        at(waited.wrongAfterRevocation),
      ),
    );
  }
}

await main();
