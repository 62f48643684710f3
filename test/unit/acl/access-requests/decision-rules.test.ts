import { describe, expect, it } from 'vitest';
import type { AccessRequestState } from '../../../../src/api/v1alpha1/index.js';
import {
  assertMayDecide,
  assertPending,
  maySee,
  type Decision,
  type Standing,
} from '../../../../src/acl/access-requests/decision-rules.js';
import { errorKindOf as kindOf } from '../../http/support/error-kind.js';

const consumer: Standing = { consumer: true, decider: false };
const decider: Standing = { consumer: false, decider: true };
const both: Standing = { consumer: true, decider: true };
const stranger: Standing = { consumer: false, decider: false };

describe('assertMayDecide', () => {
  it.each<[Standing, Decision, boolean]>([
    [decider, 'APPROVED', true],
    [decider, 'REJECTED', true],
    [decider, 'WITHDRAWN', false],
    [consumer, 'APPROVED', false],
    [consumer, 'REJECTED', false],
    [consumer, 'WITHDRAWN', true],
    [both, 'APPROVED', true],
    [both, 'WITHDRAWN', true],
    [stranger, 'APPROVED', false],
    [stranger, 'WITHDRAWN', false],
  ])('%o may %s: %s', (standing, decision, allowed) => {
    expect(kindOf(() => assertMayDecide(standing, decision, 'r1'))).toBe(allowed ? undefined : 'Forbidden');
  });
});

describe('assertPending', () => {
  it.each<[AccessRequestState, string | undefined]>([
    ['PENDING', undefined],
    ['APPROVED', 'Conflict'],
    ['REJECTED', 'Conflict'],
    ['WITHDRAWN', 'Conflict'],
    ['EXPIRED', 'Conflict'],
  ])('from %s: %s', (state, kind) => {
    expect(kindOf(() => assertPending(state, 'r1'))).toBe(kind);
  });
});

describe('maySee', () => {
  it('the consumer and deciders only', () => {
    expect([consumer, decider, both, stranger].map(maySee)).toEqual([true, true, true, false]);
  });
});
