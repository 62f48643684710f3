import { describe, expect, it } from 'vitest';
import { SpiceDBLiveness } from '../../../src/decision/spicedb-liveness.js';
import { until } from '../../../dev/wait/until.js';
import { sleep } from '../../../dev/wait/sleep.js';

/** A probe whose answers the test releases or fails, one at a time. */
function probes() {
  const pending: Array<{ answer: () => void; fail: () => void }> = [];
  return {
    pending,
    probe: () =>
      new Promise<void>((resolve, reject) =>
        pending.push({ answer: resolve, fail: () => reject(new Error('down')) }),
      ),
  };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

function liveness() {
  const clock = { now: 10_000 };
  const watch: { lastMessageAt: number | undefined } = { lastMessageAt: undefined };
  const spicedb = probes();
  const live = new SpiceDBLiveness({
    probe: spicedb.probe,
    windowMs: 1_000,
    lastWatchMessageAt: () => watch.lastMessageAt,
    now: () => clock.now,
  });
  return { live, clock, watch, spicedb };
}

describe('SpiceDBLiveness', () => {
  it('is not live before SpiceDB answered, and probes (one at a time) to find out', async () => {
    const { live, clock, spicedb } = liveness();
    expect(live.recent()).toBe(false);
    expect(live.recent()).toBe(false);
    expect(spicedb.pending).toHaveLength(1);
    clock.now += 300; // answered late: it counts from when it was sent
    spicedb.pending.shift()?.answer();
    await settled();
    expect(live.recent()).toBe(true);
    clock.now += 700;
    expect(live.recent()).toBe(true);
    clock.now += 1;
    expect(live.recent()).toBe(false);
  });

  it('takes a Watch message as an answer, and probes only past half the window', async () => {
    const { live, clock, watch, spicedb } = liveness();
    watch.lastMessageAt = clock.now;
    clock.now += 500;
    expect(live.recent()).toBe(true);
    expect(spicedb.pending).toHaveLength(0);
    clock.now += 1;
    expect(live.recent()).toBe(true);
    expect(spicedb.pending).toHaveLength(1);
  });

  it('stops being live when probes go unanswered or fail (a stalled or broken connection)', async () => {
    const { live, clock, watch, spicedb } = liveness();
    watch.lastMessageAt = clock.now;
    clock.now += 600;
    expect(live.recent()).toBe(true); // a probe goes out and hangs
    clock.now += 401;
    expect(live.recent()).toBe(false);
    expect(spicedb.pending).toHaveLength(1); // not a second one while the first hangs
    spicedb.pending.shift()?.fail();
    await settled();
    expect(live.recent()).toBe(false);
    expect(spicedb.pending).toHaveLength(1); // the next lookup probes again
  });

  it('probes from a timer once started, so that an idle service stays live, and no more once stopped', async () => {
    const spicedb = probes();
    const live = new SpiceDBLiveness({
      probe: spicedb.probe,
      windowMs: 40,
      lastWatchMessageAt: () => undefined,
    });
    live.start();
    await until(() => spicedb.pending.length === 1, 'a probe from the timer');
    spicedb.pending.shift()?.answer();
    await until(() => live.recent(), 'the answer');
    live.stop();
    spicedb.pending.length = 0;
    await sleep(60);
    expect(spicedb.pending).toHaveLength(0);
  });
});
