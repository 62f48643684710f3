import { describe, expect, it } from 'vitest';
import { CheckBatcher } from '../../../src/decision/check-batcher.js';
import type { BulkPermissionChecker, CheckBatchSettings } from '../../../src/decision/check-batcher.js';
import type {
  BulkCheckAnswer,
  BulkCheckItem,
  CheckPermissionInput,
  CheckPermissionResult,
  Consistency,
} from '../../../src/spicedb/client.js';
import { SpiceDBError, SpiceDBUnavailableError } from '../../../src/spicedb/errors.js';

const MINIMIZE_LATENCY: Consistency = { minimizeLatency: true };

/** A check of `user` on item `r`, at `consistency`. */
function check(user: string, consistency: Consistency = MINIMIZE_LATENCY) {
  return {
    resource: { type: 'resource', id: 'r' },
    permission: 'api_consumer',
    subject: { type: 'user', id: user },
    consistency,
  };
}

/** Users whose name starts with `allowed` are allowed; every answer names its user in `checkedAt`. */
function answerFor(item: BulkCheckItem): CheckPermissionResult {
  return { allowed: item.subject.id.startsWith('allowed'), checkedAt: `for ${item.subject.id}` };
}

interface Call {
  kind: 'single' | 'bulk';
  users: string[];
  consistency: Consistency;
}

/**
 * Stands in for SpiceDB: records every call; each call waits until the test releases it (`release`) unless
 * `immediate`; `failItem` answers an item with its own error, `failCall` fails a whole bulk call.
 */
function fakeSpiceDB(options: { immediate?: boolean } = {}) {
  const calls: Call[] = [];
  const held: Array<() => void> = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const fake = {
    calls,
    failItem: undefined as ((item: BulkCheckItem) => SpiceDBError | undefined) | undefined,
    failCall: undefined as Error | undefined,
    answerCount: undefined as number | undefined,
    get mostInFlight() {
      return mostInFlight;
    },
    get held() {
      return held.length;
    },
    /** Lets the oldest held call answer. */
    release() {
      held.shift()?.();
    },
  };
  const hold = async (call: Call) => {
    calls.push(call);
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    if (!options.immediate) await new Promise<void>((resolve) => held.push(resolve));
    inFlight -= 1;
  };
  const spicedb: BulkPermissionChecker = {
    async checkPermission({ consistency, ...item }: CheckPermissionInput): Promise<CheckPermissionResult> {
      await hold({ kind: 'single', users: [item.subject.id], consistency: consistency ?? MINIMIZE_LATENCY });
      const failure = fake.failItem?.(item);
      if (failure) throw failure;
      return answerFor(item);
    },
    async checkBulkPermissions(items: readonly BulkCheckItem[], consistency: Consistency) {
      await hold({ kind: 'bulk', users: items.map((item) => item.subject.id), consistency });
      if (fake.failCall) throw fake.failCall;
      return items
        .map((item): BulkCheckAnswer => fake.failItem?.(item) ?? answerFor(item))
        .slice(0, fake.answerCount ?? items.length);
    },
  };
  return { fake, spicedb };
}

function batcher(
  spicedb: BulkPermissionChecker,
  settings: Partial<Pick<CheckBatchSettings, 'maxItems' | 'concurrency'>> = {},
) {
  const sizes: number[] = [];
  const batches = new CheckBatcher({
    spicedb,
    settings: { maxItems: 100, concurrency: 1, ...settings },
    sent: (checks) => sizes.push(checks),
  });
  return { batches, sizes };
}

/** One turn of the event loop: what the batcher sends in the turn a check arrived in has gone out. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Keeps the only call busy with a first check, so that the checks after it wait. */
async function occupied(settings: Partial<Pick<CheckBatchSettings, 'maxItems' | 'concurrency'>> = {}) {
  const { fake, spicedb } = fakeSpiceDB();
  const { batches, sizes } = batcher(spicedb, settings);
  const first = batches.check(check('first'));
  await nextTurn();
  expect(fake.calls).toHaveLength(1);
  return { fake, batches, sizes, first };
}

/** Releases held calls until every check settled. */
async function releaseAll(fake: ReturnType<typeof fakeSpiceDB>['fake'], checks: Array<Promise<unknown>>) {
  const settled = Promise.allSettled(checks);
  let done = false;
  void settled.then(() => (done = true));
  while (!done) {
    fake.release();
    await nextTurn();
  }
  return settled;
}

describe('CheckBatcher sends a lone check at once', () => {
  it('as a CheckPermission of its own, in the turn it arrived in', async () => {
    const { fake, spicedb } = fakeSpiceDB({ immediate: true });
    const { batches, sizes } = batcher(spicedb, { concurrency: 4 });
    const answer = batches.check(check('allowed-alice'));
    await nextTurn();
    expect(fake.calls).toEqual([{ kind: 'single', users: ['allowed-alice'], consistency: MINIMIZE_LATENCY }]);
    await expect(answer).resolves.toEqual({ allowed: true, checkedAt: 'for allowed-alice' });
    expect(sizes).toEqual([1]);
  });

  it('sends the checks of one turn together, while a call is free', async () => {
    const { fake, spicedb } = fakeSpiceDB({ immediate: true });
    const { batches, sizes } = batcher(spicedb, { concurrency: 4 });
    const answers = ['allowed-a', 'b', 'allowed-c'].map((user) => batches.check(check(user)));
    expect(await Promise.all(answers)).toEqual([
      { allowed: true, checkedAt: 'for allowed-a' },
      { allowed: false, checkedAt: 'for b' },
      { allowed: true, checkedAt: 'for allowed-c' },
    ]);
    expect(fake.calls).toEqual([
      { kind: 'bulk', users: ['allowed-a', 'b', 'allowed-c'], consistency: MINIMIZE_LATENCY },
    ]);
    expect(sizes).toEqual([3]);
  });
});

describe('CheckBatcher queues the checks that arrive while every call is busy', () => {
  it('and sends them together when a call is free, each answered with its own result', async () => {
    const { fake, batches, sizes, first } = await occupied();
    const users = ['u1', 'allowed-u2', 'u3', 'allowed-u4', 'u5'];
    const answers = users.map((user) => batches.check(check(user)));
    await nextTurn();
    expect(fake.calls).toHaveLength(1);
    expect(batches.waiting).toBe(5);

    await releaseAll(fake, [first, ...answers]);
    expect(fake.calls[1]).toEqual({ kind: 'bulk', users, consistency: MINIMIZE_LATENCY });
    expect(await Promise.all(answers)).toEqual(
      users.map((user) => ({ allowed: user.startsWith('allowed'), checkedAt: `for ${user}` })),
    );
    expect(sizes).toEqual([1, 5]);
    expect(batches.waiting).toBe(0);
  });

  it('groups them by consistency: minimize_latency together, at_least_as_fresh per token, oldest first', async () => {
    const { fake, batches, first } = await occupied();
    const [tokenA, tokenB] = [{ atLeastAsFresh: 'A' }, { atLeastAsFresh: 'B' }];
    const answers = [
      batches.check(check('a1', tokenA)),
      batches.check(check('m1')),
      batches.check(check('b1', tokenB)),
      batches.check(check('a2', tokenA)),
      batches.check(check('m2')),
    ];
    await releaseAll(fake, [first, ...answers]);
    expect(fake.calls.slice(1)).toEqual([
      { kind: 'bulk', users: ['a1', 'a2'], consistency: tokenA },
      { kind: 'bulk', users: ['m1', 'm2'], consistency: MINIMIZE_LATENCY },
      { kind: 'single', users: ['b1'], consistency: tokenB },
    ]);
    expect((await Promise.all(answers)).map((answer) => answer.checkedAt)).toEqual(
      ['a1', 'm1', 'b1', 'a2', 'm2'].map((user) => `for ${user}`),
    );
  });

  it('keeps the consistencies SpiceDB tells apart in separate calls', async () => {
    const { fake, batches, first } = await occupied();
    const consistencies: Consistency[] = [
      { fullyConsistent: true },
      { atExactSnapshot: 'S' },
      { atLeastAsFresh: 'S' },
      { fullyConsistent: true },
    ];
    const answers = consistencies.map((consistency, index) => batches.check(check(`u${index}`, consistency)));
    await releaseAll(fake, [first, ...answers]);
    expect(fake.calls.slice(1).map((call) => [call.users, call.consistency])).toEqual([
      [['u0', 'u3'], { fullyConsistent: true }],
      [['u1'], { atExactSnapshot: 'S' }],
      [['u2'], { atLeastAsFresh: 'S' }],
    ]);
  });

  it('puts at most maxItems checks in one call', async () => {
    const { fake, batches, sizes, first } = await occupied({ maxItems: 3 });
    const answers = Array.from({ length: 7 }, (_, index) => batches.check(check(`u${index}`)));
    await releaseAll(fake, [first, ...answers]);
    expect(fake.calls.slice(1).map((call) => call.users)).toEqual([
      ['u0', 'u1', 'u2'],
      ['u3', 'u4', 'u5'],
      ['u6'],
    ]);
    expect(sizes).toEqual([1, 3, 3, 1]);
  });

  it('keeps at most `concurrency` calls in flight', async () => {
    const { fake, spicedb } = fakeSpiceDB();
    const { batches } = batcher(spicedb, { concurrency: 2, maxItems: 2 });
    const answers = Array.from({ length: 12 }, (_, index) => batches.check(check(`u${index}`)));
    await nextTurn();
    expect(fake.held).toBe(2);
    expect(batches.waiting).toBe(8);
    await releaseAll(fake, answers);
    expect(fake.mostInFlight).toBe(2);
    expect(fake.calls).toHaveLength(6);
    expect(fake.calls.flatMap((call) => call.users)).toEqual(
      Array.from({ length: 12 }, (_, index) => `u${index}`),
    );
  });
});

describe('CheckBatcher fails closed', () => {
  it('fails only the check SpiceDB answered with an error of its own', async () => {
    const { fake, batches, first } = await occupied();
    const itemError = new SpiceDBError('CheckBulkPermissions', 9, 'object definition not found');
    fake.failItem = (item) => (item.subject.id === 'broken' ? itemError : undefined);
    const answers = ['allowed-a', 'broken', 'c'].map((user) => batches.check(check(user)));
    const settled = await releaseAll(fake, [first, ...answers]);
    expect(settled.slice(1)).toEqual([
      { status: 'fulfilled', value: { allowed: true, checkedAt: 'for allowed-a' } },
      { status: 'rejected', reason: itemError },
      { status: 'fulfilled', value: { allowed: false, checkedAt: 'for c' } },
    ]);
  });

  it('fails every check of a call that failed as a whole', async () => {
    const { fake, batches, first } = await occupied();
    const callError = new SpiceDBUnavailableError('CheckBulkPermissions', 4, 'deadline exceeded');
    fake.failCall = callError;
    const answers = ['allowed-a', 'b'].map((user) => batches.check(check(user)));
    const settled = await releaseAll(fake, [first, ...answers]);
    expect(settled.slice(1)).toEqual([
      { status: 'rejected', reason: callError },
      { status: 'rejected', reason: callError },
    ]);
  });

  it('fails a check SpiceDB left without an answer', async () => {
    const { fake, batches, first } = await occupied();
    fake.answerCount = 1;
    const answers = ['allowed-a', 'allowed-b'].map((user) => batches.check(check(user)));
    const settled = await releaseAll(fake, [first, ...answers]);
    expect(settled[1]).toEqual({ status: 'fulfilled', value: { allowed: true, checkedAt: 'for allowed-a' } });
    expect(settled[2]).toMatchObject({ status: 'rejected', reason: expect.any(SpiceDBError) });
  });

  it('fails a lone check with its CheckPermission error, and keeps serving the next ones', async () => {
    const { fake, spicedb } = fakeSpiceDB({ immediate: true });
    const { batches } = batcher(spicedb);
    const unavailable = new SpiceDBUnavailableError('CheckPermission', 14, 'connection refused');
    fake.failItem = () => unavailable;
    await expect(batches.check(check('allowed-a'))).rejects.toBe(unavailable);
    fake.failItem = undefined;
    await expect(batches.check(check('allowed-a'))).resolves.toMatchObject({ allowed: true });
  });
});
