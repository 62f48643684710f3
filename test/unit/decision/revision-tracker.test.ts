import { describe, expect, it } from 'vitest';
import { RevisionTracker } from '../../../src/decision/revision-tracker.js';

function trackerAt(options: { retentionMs?: number; maxEntries?: number } = {}) {
  const clock = { now: 1_000 };
  const tracker = new RevisionTracker({
    retentionMs: options.retentionMs ?? 7_000,
    maxEntries: options.maxEntries ?? 1_000,
    now: () => clock.now,
  });
  return { tracker, clock };
}

describe('RevisionTracker', () => {
  it('knows whether a change was delivered within a time, past its retention too', () => {
    const { tracker, clock } = trackerAt();
    expect(tracker.changedWithin(1_000)).toBe(false);
    tracker.record('t1', []);
    expect(tracker.changedWithin(1_000)).toBe(false);
    tracker.record('t2', ['resource:a']);
    clock.now += 2_000;
    expect(tracker.changedWithin(2_001)).toBe(true);
    expect(tracker.changedWithin(1_999)).toBe(false);
    expect(tracker.changedWithin(-1)).toBe(true);
    clock.now += 100_000;
    expect(tracker.changedWithin(102_001)).toBe(true);
    expect(tracker.changedWithin(101_999)).toBe(false);
    tracker.touchEverything();
    expect(tracker.changedWithin(1)).toBe(true);
    clock.now += 10;
    expect(tracker.changedWithin(5)).toBe(false);
    tracker.reset();
    expect(tracker.changedWithin(1)).toBe(true);
  });

  it('knows nothing at first', () => {
    const { tracker } = trackerAt();
    expect(tracker.newestTouching(['resource:a', 'user:u'])).toBeUndefined();
    expect(tracker.newest).toBeUndefined();
    expect(tracker.positionOf('t1')).toBeUndefined();
  });

  it('answers the newest revision that touched any of the keys, in the stream’s order', () => {
    const { tracker } = trackerAt();
    tracker.record('t1', ['resource:a', 'user:u']);
    tracker.record('t2', ['resource:b', 'user:v']);
    tracker.record('t3', ['organization:o', 'user:u']);
    expect(tracker.newestTouching(['resource:a', 'user:u'])).toEqual({ token: 't3', position: 3 });
    expect(tracker.newestTouching(['resource:a', 'user:w'])).toEqual({ token: 't1', position: 1 });
    expect(tracker.newestTouching(['resource:b', 'user:w'])).toEqual({ token: 't2', position: 2 });
    expect(tracker.newestTouching(['resource:c', 'user:w'])).toBeUndefined();
    expect(tracker.newest).toEqual({ token: 't3', position: 3 });
  });

  it('answers the newest change of any key for a search, not a checkpoint, until its retention ends', () => {
    const { tracker, clock } = trackerAt();
    tracker.record('t1', ['resource:a']);
    tracker.record('t2', ['resource:b']);
    tracker.record('checkpoint', []);
    expect(tracker.newestChange()).toEqual({ token: 't2', position: 2 });
    clock.now += 7_000;
    expect(tracker.newestChange()).toBeUndefined();
  });

  it('orders tokens by the stream, checkpoints included, and keeps one place for a repeated token', () => {
    const { tracker } = trackerAt();
    tracker.record('t1', ['resource:a']);
    tracker.record('t1', []); // the checkpoint of the same revision
    tracker.record('t2', []);
    expect(tracker.positionOf('t1')).toBe(1);
    expect(tracker.positionOf('t2')).toBe(2);
    expect(tracker.positionOf('never-seen')).toBeUndefined();
  });

  it('forgets a change once the retention has passed', () => {
    const { tracker, clock } = trackerAt({ retentionMs: 7_000 });
    tracker.record('t1', ['resource:a']);
    clock.now += 6_999;
    expect(tracker.newestTouching(['resource:a'])?.token).toBe('t1');
    expect(tracker.positionOf('t1')).toBe(1);
    clock.now += 1;
    expect(tracker.newestTouching(['resource:a'])).toBeUndefined();
    expect(tracker.positionOf('t1')).toBeUndefined();
    expect(tracker.size).toBe(0);
  });

  it('extends a key’s retention when it is touched again', () => {
    const { tracker, clock } = trackerAt({ retentionMs: 7_000 });
    tracker.record('t1', ['resource:a']);
    clock.now += 5_000;
    tracker.record('t2', ['resource:a']);
    clock.now += 5_000;
    expect(tracker.newestTouching(['resource:a'])?.token).toBe('t2');
  });

  it('counts everything as touched, at the newest revision, for one retention', () => {
    const { tracker, clock } = trackerAt({ retentionMs: 7_000 });
    tracker.record('t1', ['resource:a']);
    tracker.touchEverything();
    tracker.record('t2', []);
    expect(tracker.newestTouching(['resource:never'])).toEqual({ token: 't2', position: 2 });
    clock.now += 7_000;
    expect(tracker.newestTouching(['resource:never'])).toBeUndefined();
  });

  it('bounds its memory: past maxEntries it forgets the keys and counts everything as touched', () => {
    const { tracker, clock } = trackerAt({ maxEntries: 10, retentionMs: 7_000 });
    for (let index = 0; index < 6; index++) tracker.record(`t${index}`, [`resource:${index}`]);
    expect(tracker.size).toBeLessThanOrEqual(10);
    expect(tracker.newestTouching(['user:anyone'])).toEqual({ token: 't5', position: 6 });
    clock.now += 7_000;
    expect(tracker.newestTouching(['user:anyone'])).toBeUndefined();
  });

  it('forgets everything on reset (tokens of a datastore that is gone)', () => {
    const { tracker } = trackerAt();
    tracker.record('t1', ['resource:a']);
    tracker.touchEverything();
    tracker.reset();
    expect(tracker.newest).toBeUndefined();
    expect(tracker.newestTouching(['resource:a'])).toBeUndefined();
    expect(tracker.positionOf('t1')).toBeUndefined();
  });
});
