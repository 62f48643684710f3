import { z } from 'zod';
import { dateTimeField, uuidField } from '../../api/v1alpha1/field-schemas.js';
import { groupIdField, type MembershipKey } from '../../api/v1alpha1/index.js';

// The membership events of POST /events as CloudEvents 1.0 (JSON format): one event in structured mode,
// an array in batch mode. These schemas validate a request and describe it in the OpenAPI document.

export const STRUCTURED_MEDIA_TYPE = 'application/cloudevents+json';
export const BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';

/** Events per batch: a batch is validated whole before anything is applied, so its size is bounded. */
export const MAX_EVENTS_PER_BATCH = 1_000;

/**
 * How far in the future an event's time may lie. An event applied with a time far ahead would make every
 * later event of its membership stale until then, so a clock that far off is refused rather than obeyed.
 */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

export const MEMBER_EVENT_TYPES = [
  'org.member.added',
  'org.member.removed',
  'group.member.added',
  'group.member.removed',
] as const;
export type MemberEventType = (typeof MEMBER_EVENT_TYPES)[number];

const OrgMemberDataSchema = z.strictObject({
  organisationId: uuidField().describe('The organisation.'),
  userId: uuidField().describe('The user.'),
});

const GroupMemberDataSchema = z.strictObject({
  organisationId: uuidField().describe('The organisation the group belongs to.'),
  groupId: groupIdField().describe('The group, within the organisation.'),
  userId: uuidField().describe('The user.'),
});

const attributes = {
  specversion: z.literal('1.0').describe('CloudEvents version; only 1.0.'),
  id: z
    .string()
    .min(1)
    .max(256)
    .describe('Unique per source: a redelivery with the same source and id is a duplicate.'),
  source: z.string().min(1).max(1024).describe('URI-reference naming the producer.'),
  time: dateTimeField().describe(
    'RFC 3339; required here (optional in CloudEvents): it orders the events of one membership, so a late ' +
      'event older than the last one applied is stale. Beyond the schema: at most ' +
      `${MAX_CLOCK_SKEW_MS / 60_000} minutes ahead of the service's clock (else 400).`,
  ),
  datacontenttype: z
    .string()
    .regex(/^application\/json\s*(;.*)?$/, 'datacontenttype must be application/json when present')
    .optional(),
};

function eventOf<T extends MemberEventType, D extends z.ZodType>(type: T, data: D) {
  return z.object({ ...attributes, type: z.literal(type), data });
}

const OrgMemberAdded = eventOf('org.member.added', OrgMemberDataSchema);
const OrgMemberRemoved = eventOf('org.member.removed', OrgMemberDataSchema);
const GroupMemberAdded = eventOf('group.member.added', GroupMemberDataSchema);
const GroupMemberRemoved = eventOf('group.member.removed', GroupMemberDataSchema);

export const MemberEventSchema = z
  .discriminatedUnion('type', [OrgMemberAdded, OrgMemberRemoved, GroupMemberAdded, GroupMemberRemoved], {
    error: (issue) =>
      issue.code === 'invalid_union' ? `type must be one of ${MEMBER_EVENT_TYPES.join(', ')}` : undefined,
  })
  .superRefine((event, ctx) => {
    if (Date.parse(event.time) > Date.now() + MAX_CLOCK_SKEW_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['time'],
        message: `time must not be more than ${MAX_CLOCK_SKEW_MS / 60_000} minutes in the future`,
      });
    }
  })
  .meta({ id: 'MemberEvent', description: 'A CloudEvents 1.0 membership event (JSON format).' });
export type MemberEvent = z.output<typeof MemberEventSchema>;

export const MemberEventBatchSchema = z
  .array(MemberEventSchema)
  .max(MAX_EVENTS_PER_BATCH, `a batch holds at most ${MAX_EVENTS_PER_BATCH} events`)
  .meta({
    id: 'MemberEventBatch',
    description: `CloudEvents JSON batch: up to ${MAX_EVENTS_PER_BATCH} events, validated all or none.`,
  });

/** What an event does to its membership. */
export interface MembershipChange {
  key: MembershipKey;
  member: boolean;
  /** Milliseconds since the epoch. */
  time: number;
  source: string;
  id: string;
}

export function membershipChange(event: MemberEvent): MembershipChange {
  const { organisationId, userId } = event.data;
  const groupId = 'groupId' in event.data ? event.data.groupId : undefined;
  return {
    key: { organisationId, userId, ...(groupId === undefined ? {} : { groupId }) },
    member: event.type.endsWith('.added'),
    time: Date.parse(event.time),
    source: event.source,
    id: event.id,
  };
}
