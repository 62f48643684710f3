import { createHash } from 'node:crypto';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { z } from 'zod';
import { dateTimeField, uuidField } from './field-schemas.js';
import type { GROUP_VERSION, MEMBERSHIP_KIND } from './group-version.js';
import { projectedStatusFields } from './status-fields.js';

/** How many applied events a Membership remembers, to answer a redelivered one as a duplicate. */
export const MAX_REMEMBERED_EVENTS = 16;

/** Group ids are not UUIDs everywhere: any short id of safe characters, meaningful within its organisation. */
export const groupIdField = () =>
  z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9._~-]+$/, { error: 'Invalid group id: expected 1-128 of A-Z a-z 0-9 . _ ~ -' });

const AppliedEventSchema = z
  .object({
    source: z.string().min(1).max(1024).describe('The CloudEvents source of the event.'),
    id: z.string().min(1).max(256).describe('The CloudEvents id of the event, unique per source.'),
  })
  .describe('An event that was applied to this membership.');

export const MembershipSpecSchema = z
  .object({
    organisationId: uuidField().describe('UUID of the organisation.'),
    groupId: groupIdField()
      .optional()
      .describe('Id of a group within the organisation; absent for a membership of the organisation itself.'),
    userId: uuidField().describe('UUID of the member user.'),
    removedAt: dateTimeField()
      .optional()
      .describe(
        'When the user stopped being a member (the removal event or snapshot). The object stays as a record, so an older event cannot bring the membership back; a removed membership gives nothing.',
      ),
    changedAt: dateTimeField()
      .optional()
      .describe(
        'Time of the event or snapshot that set the current state; an event older than this is stale and changes nothing.',
      ),
    appliedEvents: z
      .array(AppliedEventSchema)
      .max(MAX_REMEMBERED_EVENTS)
      .meta({ 'x-kubernetes-list-type': 'atomic' })
      .optional()
      .describe(
        'The most recent events applied to this membership, newest first; a redelivery is a duplicate.',
      ),
  })
  .describe('A user who is a member of an organisation, or of a group within it.');
export type MembershipSpec = z.infer<typeof MembershipSpecSchema>;

export const MembershipStatusSchema = z
  .object(projectedStatusFields('membership'))
  .describe('What the controller observed and did; written by the controller only.');
export type MembershipStatus = z.infer<typeof MembershipStatusSchema>;

/** A Membership object as the Kubernetes API serves it. */
export interface Membership {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof MEMBERSHIP_KIND;
  metadata: V1ObjectMeta;
  spec: MembershipSpec;
  status?: MembershipStatus;
}

/** What identifies a membership: one object per (organisation, group or none, user). */
export type MembershipKey = Pick<MembershipSpec, 'organisationId' | 'groupId' | 'userId'>;

/** `<organisation>|<group or empty>|<user>`: the key as one string, for indexes and maps. */
export function membershipKeyString(key: MembershipKey): string {
  return `${key.organisationId}|${key.groupId ?? ''}|${key.userId}`;
}

/**
 * The object name of a membership: deterministic from its key, so that two writers of one membership meet on
 * one object. A hash, because group ids may hold characters and lengths that object names do not allow.
 */
export function membershipName(key: MembershipKey): string {
  const digest = createHash('sha256').update(membershipKeyString(key)).digest('hex').slice(0, 40);
  return `${key.groupId === undefined ? 'org' : 'group'}-${digest}`;
}

/** Whether the membership counts: present and not removed. */
export function isMember(membership: Pick<Membership, 'spec' | 'metadata'>): boolean {
  return membership.spec.removedAt === undefined && !membership.metadata.deletionTimestamp;
}
