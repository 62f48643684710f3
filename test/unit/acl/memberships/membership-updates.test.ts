import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { MembershipChange } from '../../../../src/acl/memberships/cloud-events.js';
import {
  decideEvent,
  decideEvents,
  decideSnapshot,
  inTimeOrder,
} from '../../../../src/acl/memberships/membership-updates.js';
import { MAX_REMEMBERED_EVENTS, type MembershipSpec } from '../../../../src/api/v1alpha1/index.js';

const key = { organisationId: randomUUID(), userId: randomUUID() };
const T1 = Date.parse('2026-11-22T10:00:00Z');
const T2 = T1 + 1_500;

function change(
  member: boolean,
  time: number,
  id: string = randomUUID(),
  source = '//idp',
): MembershipChange {
  return { key, member, time, source, id };
}

describe('decideEvent', () => {
  it('the first event creates the spec: state, changedAt = event time, the event remembered', () => {
    const added = change(true, T1, 'a');
    expect(decideEvent(undefined, added)).toEqual({
      outcome: 'applied',
      spec: { ...key, changedAt: '2026-11-22T10:00:00.000Z', appliedEvents: [{ source: '//idp', id: 'a' }] },
    });
    const removed = decideEvent(undefined, change(false, T1, 'r'));
    expect(removed.spec?.removedAt).toBe('2026-11-22T10:00:00.000Z');
  });

  it('duplicate: the same source and id, whatever its time; the spec is returned as it was', () => {
    const { spec } = decideEvent(undefined, change(true, T1, 'a'));
    const redelivered = decideEvent(spec, change(false, T2, 'a'));
    expect(redelivered.outcome).toBe('duplicate');
    expect(redelivered.spec).toBe(spec);
    expect(decideEvent(spec, change(false, T2, 'a', '//other')).outcome).toBe('applied');
  });

  it('stale: older than changedAt; an event of the same instant applies', () => {
    const { spec } = decideEvent(undefined, change(false, T2));
    const late = decideEvent(spec, change(true, T1));
    expect(late).toEqual({ outcome: 'stale', spec });
    const sameInstant = decideEvent(spec, change(true, T2));
    expect(sameInstant.outcome).toBe('applied');
    expect(sameInstant.spec?.removedAt).toBe(undefined);
  });

  it('added clears removedAt, removed sets it to the event time; the newest event first, at most the bound', () => {
    let spec: MembershipSpec | undefined;
    const ids = Array.from({ length: MAX_REMEMBERED_EVENTS + 3 }, (_, index) => `e${index}`);
    ids.forEach((id, index) => {
      spec = decideEvent(spec, change(index % 2 === 0, T1 + index * 1_000, id)).spec;
    });
    expect(spec?.appliedEvents).toHaveLength(MAX_REMEMBERED_EVENTS);
    expect(spec?.appliedEvents?.[0]?.id).toBe(ids.at(-1));
    expect(spec?.removedAt).toBe(undefined);
    const removed = decideEvent(spec, change(false, T1 + 99_000)).spec;
    expect(removed?.removedAt).toBe(new Date(T1 + 99_000).toISOString());
    expect(removed?.changedAt).toBe(removed?.removedAt);
  });

  it('keeps a group membership its groupId', () => {
    const groupKey = { ...key, groupId: 'g' };
    expect(decideEvent(undefined, { ...change(true, T1), key: groupKey }).spec).toMatchObject(groupKey);
  });
});

describe('decideEvents and inTimeOrder', () => {
  it('removed at t2 arriving before added at t1: sorted, both apply and the user ends removed', () => {
    const removed = { change: change(false, T2, 'r') };
    const added = { change: change(true, T1, 'a') };
    const ordered = inTimeOrder([removed, added]);
    expect(ordered).toEqual([added, removed]);
    const decided = decideEvents(
      undefined,
      ordered.map((event) => event.change),
    );
    expect(decided.outcomes).toEqual(['applied', 'applied']);
    expect(decided.spec?.removedAt).toBe(new Date(T2).toISOString());
  });

  it('events of one instant keep their arrival order', () => {
    const events = ['x', 'y', 'z'].map((id) => ({ change: change(true, T1, id) }));
    expect(inTimeOrder(events)).toEqual(events);
  });

  it('a batch of redeliveries changes nothing: the same spec object comes back', () => {
    const { spec } = decideEvents(undefined, [change(true, T1, 'a'), change(false, T2, 'b')]);
    const again = decideEvents(spec, [change(true, T1, 'a'), change(false, T2, 'b')]);
    expect(again.outcomes).toEqual(['duplicate', 'duplicate']);
    expect(again.spec).toBe(spec);
  });
});

describe('decideSnapshot', () => {
  const now = new Date(T1 - 60_000);

  it('is authoritative: sets the state even over a newer changedAt, dated now, keeping the remembered events', () => {
    const { spec } = decideEvent(undefined, change(true, T2, 'a'));
    const removed = decideSnapshot(spec, key, false, now);
    expect(removed).toEqual({
      ...key,
      removedAt: now.toISOString(),
      changedAt: now.toISOString(),
      appliedEvents: [{ source: '//idp', id: 'a' }],
    });
    expect(decideSnapshot(removed, key, true, now)).not.toHaveProperty('removedAt');
  });

  it('a membership already as the snapshot says is answered as given (nothing to write)', () => {
    const removed = decideEvent(undefined, change(false, T1 - 3_600_000)).spec;
    expect(decideSnapshot(removed, key, false, now)).toBe(removed);
    const added = decideEvent(undefined, change(true, T1 - 3_600_000)).spec;
    expect(decideSnapshot(added, key, true, now)).toBe(added);
    expect(decideSnapshot(undefined, key, false, now)).toBe(undefined);
  });

  it('creates a missing membership', () => {
    expect(decideSnapshot(undefined, key, true, now)).toEqual({ ...key, changedAt: now.toISOString() });
  });
});
