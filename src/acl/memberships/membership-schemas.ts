import { z } from 'zod';
import { uuidField } from '../../api/v1alpha1/field-schemas.js';
import { groupIdField } from '../../api/v1alpha1/index.js';
import { successEnvelopeSchema } from '../../http/envelope.js';
import type { UrnScheme } from '../../http/urn.js';
import { ListingQuerySchema } from '../policy-schemas.js';
import {
  BATCH_MEDIA_TYPE,
  MemberEventBatchSchema,
  MemberEventSchema,
  STRUCTURED_MEDIA_TYPE,
} from './cloud-events.js';
import { MAX_SNAPSHOT_MEMBERS } from './member-snapshot.js';

// Request and response schemas of the membership routes: they validate requests and describe the document.

export const EventBodies = {
  [STRUCTURED_MEDIA_TYPE]: MemberEventSchema,
  [BATCH_MEDIA_TYPE]: MemberEventBatchSchema,
};

export const OrganisationParamsSchema = z.object({
  organisationId: uuidField().describe('The organisation.'),
});

export const GroupParamsSchema = OrganisationParamsSchema.extend({
  groupId: groupIdField().describe('The group, within the organisation.'),
});

export const SnapshotBodySchema = z
  .object({
    userIds: z
      .array(uuidField())
      .max(MAX_SNAPSHOT_MEMBERS)
      .superRefine((userIds, ctx) => {
        const first = new Map<string, number>();
        userIds.forEach((userId, index) => {
          const earlier = first.get(userId);
          if (earlier !== undefined) {
            ctx.addIssue({ code: 'custom', path: [index], message: `repeats userIds[${earlier}]` });
          }
          first.set(userId, earlier ?? index);
        });
      })
      .meta({ uniqueItems: true })
      .describe(`Every member, each once, at most ${MAX_SNAPSHOT_MEMBERS}; an empty list removes everyone.`),
  })
  .meta({ id: 'MemberSnapshot' });

export const MemberListingQuerySchema = ListingQuerySchema.pick({ limit: true, offset: true });

const EventResultSchema = z
  .object({
    id: z.string().describe('The event id.'),
    outcome: z
      .enum(['applied', 'duplicate', 'stale'])
      .describe(
        'applied: the membership changed (or was confirmed); duplicate: this source and id were applied ' +
          'before; stale: an event or snapshot newer than this event already set the membership.',
      ),
  })
  .meta({ id: 'MemberEventResult' });

const SnapshotCountsSchema = z
  .object({
    added: z.int().min(0).describe('Users who were not members and now are.'),
    removed: z.int().min(0).describe('Members who are not in the snapshot and were removed.'),
  })
  .meta({ id: 'MemberSnapshotCounts' });

const MemberRowSchema = z
  .object({
    userId: z.string(),
    changedAt: z.string().optional().describe('When the membership was last set (event time or snapshot).'),
  })
  .meta({ id: 'MemberRow' });

export function membershipResponseSchemas(urn: UrnScheme) {
  return {
    events: successEnvelopeSchema(urn, { results: EventResultSchema, detail: true }),
    snapshot: successEnvelopeSchema(urn, { results: SnapshotCountsSchema, detail: true }),
    members: successEnvelopeSchema(urn, { results: MemberRowSchema, paginated: true }),
  };
}
