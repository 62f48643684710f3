import { describe, expect, it } from 'vitest';
import { readyFromEnforced, setEnforcedAndReady } from '../../../src/api/v1alpha1/index.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const LATER = new Date('2026-06-01T12:05:00Z');

describe('the Ready condition', () => {
  it('is True while the object is enforced', () => {
    expect(
      readyFromEnforced({
        type: 'Enforced',
        status: 'True',
        reason: 'Projected',
        message: 'm',
        observedGeneration: 4,
      }),
    ).toEqual({ type: 'Ready', status: 'True', reason: 'Projected', message: 'm', observedGeneration: 4 });
  });

  it('is True for a state the spec asks for: revoked, expired, removed', () => {
    for (const reason of ['Revoked', 'Expired', 'Removed'])
      expect(readyFromEnforced({ type: 'Enforced', status: 'False', reason, message: '' }).status).toBe(
        'True',
      );
  });

  it('is False, with the reason, for what is to fix or wait for', () => {
    for (const reason of ['ItemNotFound', 'NotAuthorized', 'Conflict', 'ProjectionFailed', 'NotOwner'])
      expect(readyFromEnforced({ type: 'Enforced', status: 'False', reason, message: 'why' })).toEqual({
        type: 'Ready',
        status: 'False',
        reason,
        message: 'why',
      });
  });

  it('flips with Enforced, each keeping its own transition time', () => {
    const first = setEnforcedAndReady([], { status: 'False', reason: 'Revoked', message: '' }, NOW);
    expect(first.conditions.map((c) => [c.type, c.status])).toEqual([
      ['Enforced', 'False'],
      ['Ready', 'True'],
    ]);
    const second = setEnforcedAndReady(
      first.conditions,
      { status: 'False', reason: 'Conflict', message: '' },
      LATER,
    );
    expect(second.changed).toBe(true);
    expect(second.conditions.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ['Enforced', 'False', '2026-06-01T12:00:00Z'],
      ['Ready', 'False', '2026-06-01T12:05:00Z'],
    ]);
    expect(
      setEnforcedAndReady(second.conditions, { status: 'False', reason: 'Conflict', message: '' }, LATER)
        .changed,
    ).toBe(false);
  });
});
