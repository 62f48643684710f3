import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  MemberEventBatchSchema,
  MemberEventSchema,
  membershipChange,
  type MemberEvent,
} from '../../../../src/acl/memberships/cloud-events.js';
import { describeIssues } from '../../../../src/http/validation.js';

const organisationId = randomUUID();
const userId = randomUUID();
const time = '2026-11-22T10:00:00.250+01:00';

function event(overrides: Record<string, unknown> = {}) {
  return {
    specversion: '1.0',
    id: 'e-1',
    source: '//idp.example',
    time,
    type: 'group.member.added',
    data: { organisationId, groupId: 'g.1', userId },
    ...overrides,
  };
}

/** The 400 detail a batch would get, or undefined when it is valid. */
function batchProblem(batch: unknown): string | undefined {
  const parsed = MemberEventBatchSchema.safeParse(batch);
  return parsed.success ? undefined : describeIssues(parsed.error, 'body');
}

describe('MemberEventSchema', () => {
  it('accepts the four types with their data, extension attributes and a JSON datacontenttype', () => {
    const org = { organisationId, userId };
    for (const type of ['org.member.added', 'org.member.removed']) {
      expect(MemberEventSchema.safeParse(event({ type, data: org })).success, type).toBe(true);
    }
    expect(MemberEventSchema.safeParse(event({ type: 'group.member.removed' })).success).toBe(true);
    const extended = event({ traceparent: '00-abc', datacontenttype: 'application/json; charset=utf-8' });
    expect(MemberEventSchema.safeParse(extended).success).toBe(true);
  });

  it.each([
    ['a missing time', { time: undefined }, '[0].time: '],
    ['a missing source', { source: undefined }, '[0].source: '],
    ['an unknown type', { type: 'org.member.renamed' }, '[0].type: type must be one of org.member.added'],
    ['version 0.3', { specversion: '0.3' }, '[0].specversion: '],
    ['XML data', { datacontenttype: 'application/xml' }, '[0].datacontenttype: datacontenttype must be'],
    ['a group event without groupId', { data: { organisationId, userId } }, '[0].data.groupId: '],
    [
      'an upper-case user id',
      { data: { organisationId, groupId: 'g', userId: userId.toUpperCase() } },
      '[0].data.userId: Invalid UUID',
    ],
    [
      'a group id with a slash',
      { data: { organisationId, groupId: 'a/b', userId } },
      '[0].data.groupId: Invalid group id',
    ],
    [
      'a time far ahead',
      { time: new Date(Date.now() + 600_000).toISOString() },
      '[0].time: time must not be more than 5 minutes',
    ],
  ])('names the index and field of %s', (_name, overrides, detail) => {
    expect(batchProblem([event(overrides)])).toContain(detail);
  });

  it('reports the index within the batch', () => {
    expect(batchProblem([event(), event(), event({ data: {} })])).toMatch(/^\[2\]\.data\.organisationId: /);
    expect(batchProblem([event(), 'text'])).toMatch(/^\[1\]: /);
    expect(batchProblem([])).toBe(undefined);
  });
});

describe('membershipChange', () => {
  it('a group event: the key with its group, added, the time in milliseconds', () => {
    const change = membershipChange(MemberEventSchema.parse(event()) as MemberEvent);
    expect(change).toEqual({
      key: { organisationId, groupId: 'g.1', userId },
      member: true,
      time: Date.parse('2026-11-22T09:00:00.250Z'),
      source: '//idp.example',
      id: 'e-1',
    });
  });

  it('an organisation event has no groupId; removed is not a member', () => {
    const parsed = MemberEventSchema.parse(
      event({ type: 'org.member.removed', data: { organisationId, userId } }),
    );
    const change = membershipChange(parsed);
    expect(change.key).toEqual({ organisationId, userId });
    expect('groupId' in change.key).toBe(false);
    expect(change.member).toBe(false);
  });
});
