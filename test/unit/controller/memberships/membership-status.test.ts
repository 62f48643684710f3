import { describe, expect, it } from 'vitest';
import type { Membership } from '../../../../src/api/v1alpha1/index.js';
import {
  currentReason,
  isDeadLetter,
  nextMembershipStatus,
} from '../../../../src/controller/memberships/membership-status.js';
import { membership, NOW } from '../support/fakes.js';

const LATER = new Date(NOW.getTime() + 60_000);

function withStatus(object: Membership, next: ReturnType<typeof nextMembershipStatus>): Membership {
  return { ...object, status: next.status };
}

describe('the status of a membership', () => {
  it('says Enforced=True, Projected, for the generation, with the ZedToken of the write', () => {
    const change = nextMembershipStatus(
      membership('m', {}, { generation: 3 }),
      { kind: 'projected', zedToken: 't1' },
      NOW,
    );
    expect(change.changed).toBe(true);
    expect(change.status).toEqual({
      observedGeneration: 3,
      conditions: [
        {
          type: 'Enforced',
          status: 'True',
          reason: 'Projected',
          message: 'membership written to SpiceDB',
          observedGeneration: 3,
          lastTransitionTime: '2026-06-01T12:00:00Z',
        },
        {
          type: 'Ready',
          status: 'True',
          reason: 'Projected',
          message: 'membership written to SpiceDB',
          observedGeneration: 3,
          lastTransitionTime: '2026-06-01T12:00:00Z',
        },
      ],
      zedToken: 't1',
    });
  });

  it('says Removed for a removed membership, and nothing changes when it is said again', () => {
    const removed = membership('m', { removedAt: '2026-05-01T00:00:00Z' });
    const first = nextMembershipStatus(removed, { kind: 'withdrawn', zedToken: 't2' }, NOW);
    expect(first.status.conditions?.[0]).toMatchObject({ status: 'False', reason: 'Removed' });
    expect(currentReason(withStatus(removed, first))).toBe('Removed');

    const again = nextMembershipStatus(
      withStatus(removed, first),
      { kind: 'withdrawn', zedToken: undefined },
      LATER,
    );
    expect(again).toMatchObject({ changed: false, status: { zedToken: 't2' } });
  });

  it('shows a failure as a dead letter, keeping the last ZedToken and the time of the flip', () => {
    const projected = withStatus(
      membership('m'),
      nextMembershipStatus(membership('m'), { kind: 'projected', zedToken: 't1' }, NOW),
    );
    expect(isDeadLetter(projected)).toBe(false);

    const failed = withStatus(
      projected,
      nextMembershipStatus(projected, { kind: 'failed', message: 'SpiceDB unavailable' }, LATER),
    );
    expect(isDeadLetter(failed)).toBe(true);
    expect(failed.status).toMatchObject({
      zedToken: 't1',
      conditions: [
        {
          status: 'False',
          reason: 'ProjectionFailed',
          message: 'SpiceDB unavailable',
          lastTransitionTime: '2026-06-01T12:01:00Z',
        },
        { type: 'Ready', status: 'False', reason: 'ProjectionFailed' },
      ],
    });
  });

  it('bounds a long error message', () => {
    const change = nextMembershipStatus(
      membership('m'),
      { kind: 'failed', message: 'x'.repeat(100_000) },
      NOW,
    );
    expect(change.status.conditions?.[0]?.message.length).toBe(4_096);
  });

  it('has no current reason for a generation it has not seen', () => {
    const seen = withStatus(
      membership('m'),
      nextMembershipStatus(membership('m'), { kind: 'projected', zedToken: 't' }, NOW),
    );
    expect(currentReason(seen)).toBe('Projected');
    expect(currentReason({ ...seen, metadata: { ...seen.metadata, generation: 2 } })).toBeUndefined();
  });
});
