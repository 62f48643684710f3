import { describe, expect, it } from 'vitest';
import type { CheckBatchSettings } from '../../../src/decision/check-batcher.js';
import type { CheckPermissionResult } from '../../../src/spicedb/client.js';
import { SpiceDBError, SpiceDBUnavailableError } from '../../../src/spicedb/errors.js';
import { until } from '../../../dev/wait/until.js';
import { aliceChecksApi, decisionUnderTest } from './support/decision-app.js';
import type { DecisionUnderTest } from './support/decision-app.js';

/** One SpiceDB call at a time: checks that arrive while it is busy wait for it and go out together. */
const ONE_CALL: CheckBatchSettings = { enabled: true, maxItems: 100, concurrency: 1 };

type Failure = (subject: string) => Error | undefined;

/**
 * SpiceDB answers nothing until `open()`; then allows the subjects whose id starts with `allowed`, and fails the
 * checks `failure` names.
 */
function heldAnswers(decision: DecisionUnderTest, failure: Failure = () => undefined) {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  decision.spicedb.answer = async (query): Promise<CheckPermissionResult> => {
    await opened;
    const error = failure(query.subject.id);
    if (error) throw error;
    return { allowed: query.subject.id.startsWith('allowed'), checkedAt: `snapshot of ${query.subject.id}` };
  };
  return open;
}

async function metric(decision: DecisionUnderTest, line: RegExp): Promise<number | undefined> {
  const match = (await decision.metrics.metrics()).match(line);
  return match ? Number(match[1]) : undefined;
}

const waitingChecks = (decision: DecisionUnderTest) =>
  metric(decision, /^policygrant_decision_check_batch_waiting (\d+)/m);

/** Posts a check for each subject at once, once the first is with SpiceDB and the others wait for it. */
async function whileSpiceDBIsBusy(decision: DecisionUnderTest, subjects: string[], failure?: Failure) {
  const open = heldAnswers(decision, failure);
  const [first, ...others] = subjects;
  const answers = [decision.post(aliceChecksApi({ subject_id: first }))];
  await until(() => decision.spicedb.queries.length === 1, 'the first check to reach SpiceDB');
  answers.push(...others.map((subject) => decision.post(aliceChecksApi({ subject_id: subject }))));
  await until(async () => (await waitingChecks(decision)) === others.length, 'the other checks to wait');
  open();
  return Promise.all(answers);
}

describe('POST /v1/check batches the checks that arrive while SpiceDB is busy', () => {
  it('into one CheckBulkPermissions, and answers each check with its own result', async () => {
    const decision = await decisionUnderTest({ checkBatch: ONE_CALL });
    const subjects = ['allowed-first', 'bob', 'allowed-carol', 'dave'];
    const answers = await whileSpiceDBIsBusy(decision, subjects);

    expect(decision.spicedb.bulkCalls).toEqual([3]);
    expect(answers.map(({ status, body }) => [status, body.result.allowed, body.result.checked_at])).toEqual(
      subjects.map((subject) => [200, subject.startsWith('allowed'), `snapshot of ${subject}`]),
    );
    expect(answers.map(({ body }) => (body.result.subject as { id: string }).id)).toEqual(subjects);
    expect(await metric(decision, /^policygrant_decision_check_batch_size_count (\d+)/m)).toBe(2);
    expect(await metric(decision, /^policygrant_decision_check_batch_size_sum (\d+)/m)).toBe(4);
    expect(await metric(decision, /^policygrant_decision_check_batch_size_bucket\{le="1"\} (\d+)/m)).toBe(1);
  });

  it('denies with 503 only the check SpiceDB failed alone, counting its gRPC status', async () => {
    const decision = await decisionUnderTest({ checkBatch: ONE_CALL });
    const itemError = new SpiceDBError('CheckBulkPermissions', 9, 'gRPC code 9: object definition not found');
    const answers = await whileSpiceDBIsBusy(
      decision,
      ['allowed-first', 'allowed-a', 'broken', 'c'],
      (subject) => (subject === 'broken' ? itemError : undefined),
    );

    expect(decision.spicedb.bulkCalls).toEqual([3]);
    expect(answers.map(({ status, body }) => [status, body.result.allowed])).toEqual([
      [200, true],
      [200, true],
      [503, false],
      [200, false],
    ]);
    expect(answers[2]?.body.detail).toContain('spicedb');
    expect(await decision.metrics.metrics()).toContain(
      'policygrant_decision_spicedb_errors_total{grpc_code="FAILED_PRECONDITION"} 1',
    );
  });

  it('denies every check of a CheckBulkPermissions that failed as a whole with 503', async () => {
    const decision = await decisionUnderTest({ checkBatch: ONE_CALL });
    decision.spicedb.checkBulkPermissions = async () => {
      throw new SpiceDBUnavailableError('CheckBulkPermissions', 4, 'gRPC code 4: deadline exceeded');
    };
    const answers = await whileSpiceDBIsBusy(decision, ['allowed-first', 'allowed-a', 'allowed-b']);

    expect(answers.map(({ status, body }) => [status, body.result.allowed])).toEqual([
      [200, true],
      [503, false],
      [503, false],
    ]);
    expect(await decision.metrics.metrics()).toContain(
      'policygrant_decision_spicedb_errors_total{grpc_code="DEADLINE_EXCEEDED"} 2',
    );
  });

  it('sends a check at the caller’s token alone, without waiting, so that its unknown token stays its 400', async () => {
    const decision = await decisionUnderTest({ checkBatch: ONE_CALL });
    const open = heldAnswers(decision);
    const busy = decision.post(aliceChecksApi({ subject_id: 'allowed-first' }));
    await until(() => decision.spicedb.queries.length === 1, 'the first check to reach SpiceDB');

    const withToken = decision.post(
      aliceChecksApi({ subject_id: 'allowed-b', consistency_token: 'dG9rZW4=' }),
    );
    await until(
      () => decision.spicedb.queries.length === 2,
      'the check at the caller’s token to reach SpiceDB',
    );
    expect(decision.spicedb.queries[1]?.consistency).toEqual({ atLeastAsFresh: 'dG9rZW4=' });
    open();
    expect((await withToken).body.result.allowed).toBe(true);
    expect((await busy).status).toBe(200);
    expect(decision.spicedb.bulkCalls).toEqual([]);
    expect(await metric(decision, /^policygrant_decision_check_batch_size_count (\d+)/m)).toBe(1);
  });

  it('sends every check as a CheckPermission of its own, as many at once as arrive, with batching off', async () => {
    const decision = await decisionUnderTest({ checkBatch: { ...ONE_CALL, enabled: false } });
    const open = heldAnswers(decision);
    const answers = ['allowed-a', 'b', 'allowed-c'].map((subject) =>
      decision.post(aliceChecksApi({ subject_id: subject })),
    );
    await until(() => decision.spicedb.queries.length === 3, 'all three checks to reach SpiceDB');
    open();
    expect((await Promise.all(answers)).map(({ body }) => body.result.allowed)).toEqual([true, false, true]);
    expect(decision.spicedb.bulkCalls).toEqual([]);
    expect(await decision.metrics.metrics()).not.toContain('policygrant_decision_check_batch_size');
  });
});
