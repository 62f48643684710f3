import { randomUUID } from 'node:crypto';
import type { MembershipKey } from '../../src/api/v1alpha1/index.js';

// Membership events as a producer sends them to POST /events (CloudEvents 1.0, docs/acl-memberships.md).

export const STRUCTURED_EVENT = 'application/cloudevents+json';
export const EVENT_BATCH = 'application/cloudevents-batch+json';
export const TEST_EVENT_SOURCE = '//idp.example/members';

export interface MemberEvent {
  specversion: '1.0';
  id: string;
  source: string;
  time: string;
  type: string;
  data: MembershipKey;
}

/** `org.member.<change>` for a key without groupId, `group.member.<change>` with one. */
export function memberEvent(
  change: 'added' | 'removed',
  key: MembershipKey,
  time: string = new Date().toISOString(),
  id: string = randomUUID(),
): MemberEvent {
  const { organisationId, userId, groupId } = key;
  return {
    specversion: '1.0',
    id,
    source: TEST_EVENT_SOURCE,
    time,
    type: groupId === undefined ? `org.member.${change}` : `group.member.${change}`,
    data: groupId === undefined ? { organisationId, userId } : { organisationId, groupId, userId },
  };
}
