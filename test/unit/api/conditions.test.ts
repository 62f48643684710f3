import { describe, expect, it } from 'vitest';
import {
  ConditionSchema,
  ENFORCED_CONDITION,
  EnforcedReason,
  findStatusCondition,
  setStatusCondition,
  toKubernetesTime,
  type Condition,
} from '../../../src/api/v1alpha1/index.js';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const t1 = new Date('2026-01-01T00:05:00.789Z');

const projected: Condition = {
  type: ENFORCED_CONDITION,
  status: 'True',
  reason: EnforcedReason.Projected,
  message: '2 relationships written',
  observedGeneration: 1,
  lastTransitionTime: '2026-01-01T00:00:00Z',
};
const ready: Condition = { ...projected, type: 'Ready' };

describe('setStatusCondition', () => {
  it('appends a new condition type, stamped with now in whole seconds', () => {
    const { lastTransitionTime: _time, ...update } = projected;
    const result = setStatusCondition([ready], update, t1);
    expect(result).toEqual({
      conditions: [ready, { ...projected, lastTransitionTime: '2026-01-01T00:05:00Z' }],
      changed: true,
    });
  });

  it('keeps lastTransitionTime when the status stays, and takes the new reason, message and generation', () => {
    const update = { ...projected, message: 'still enforced', observedGeneration: 2 };
    const result = setStatusCondition([projected], update, t1);
    expect(result.changed).toBe(true);
    expect(result.conditions).toEqual([{ ...update, lastTransitionTime: projected.lastTransitionTime }]);
  });

  it('moves lastTransitionTime to now when the status changes', () => {
    const update = {
      ...projected,
      status: 'False' as const,
      reason: EnforcedReason.Revoked,
      message: 'revoked',
    };
    const { lastTransitionTime: _time, ...withoutTime } = update;
    const result = setStatusCondition([ready, projected], withoutTime, t1);
    expect(result.conditions).toEqual([ready, { ...update, lastTransitionTime: '2026-01-01T00:05:00Z' }]);
    expect(result.changed).toBe(true);
  });

  it('uses the given lastTransitionTime when the status changes', () => {
    const update = { ...projected, status: 'Unknown' as const, lastTransitionTime: '2026-01-01T00:03:00Z' };
    expect(setStatusCondition([projected], update, t1).conditions[0]?.lastTransitionTime).toBe(
      '2026-01-01T00:03:00Z',
    );
  });

  it('reports no change when nothing differs, whatever now is', () => {
    const { lastTransitionTime: _time, ...update } = projected;
    expect(setStatusCondition([ready, projected], update, t1)).toEqual({
      conditions: [ready, projected],
      changed: false,
    });
  });

  it('does not modify the list it is given', () => {
    const conditions = [projected];
    setStatusCondition(conditions, { ...projected, status: 'False' }, t1);
    expect(conditions).toEqual([projected]);
  });

  it('produces conditions that the CRD schema accepts', () => {
    const { conditions } = setStatusCondition([], { ...projected, lastTransitionTime: undefined }, t0);
    for (const condition of conditions) expect(ConditionSchema.parse(condition)).toEqual(condition);
  });
});

describe('findStatusCondition', () => {
  it('finds a condition by type, or nothing', () => {
    expect(findStatusCondition([ready, projected], ENFORCED_CONDITION)).toBe(projected);
    expect(findStatusCondition([ready], ENFORCED_CONDITION)).toBeUndefined();
  });
});

describe('toKubernetesTime', () => {
  it('drops the fraction of a second, as metav1.Time does', () => {
    expect(toKubernetesTime(t1)).toBe('2026-01-01T00:05:00Z');
  });
});

describe('EnforcedReason', () => {
  it('has the reasons of docs/controller-status.md, each a valid condition reason', () => {
    expect(Object.values(EnforcedReason).sort()).toEqual(
      [
        'Conflict',
        'Expired',
        'ItemNotFound',
        'NotAuthorized',
        'ProjectionFailed',
        'Projected',
        'Revoked',
      ].sort(),
    );
    for (const reason of Object.values(EnforcedReason)) {
      expect(ConditionSchema.shape.reason.safeParse(reason).success).toBe(true);
    }
  });
});
