import type { CheckPermissionInput, Relationship } from '../spicedb/client.js';

/**
 * What the barrier remembers a change by, and what a check looks up: a change touches a check when they share a
 * key. Keys are objects (`type:id`), a resource–user pair, a resource's agents, and the membership marker.
 *
 * - A relationship from a checked resource to a user (a grant to the user, an editor, a viewer) can change only
 *   that user's checks on that resource and its agents' (`*_delegate & …->agent`): it marks the pair and the
 *   resource's agents. So a grant's create or revoke does not send every check on its item, or every check of
 *   its consumer, to SpiceDB fresh: only the checks it can change.
 * - Every other relationship marks the objects at both ends. A user's or group's check looks up its resource,
 *   its subject and (a user's) the pair: every path from a resource to the subject has at most two
 *   relationships (a resource's relationship to a group or organisation, and that one's member), and any change
 *   on such a path touches one of them.
 * - An agent's check is one longer: resource → organisation or group → member (the agent's owner) → the owner's
 *   agent. A membership in the middle touches neither the resource nor the agent, so every membership change
 *   also marks MEMBERSHIPS_KEY, which an agent's check looks up: after any membership change, agents' checks
 *   are fresh for one retention (user and group checks are not affected).
 */
export const MEMBERSHIPS_KEY = 'memberships:*';

const GROUPINGS = new Set(['organization', 'group']);
const AGENT = 'agent';
const USER = 'user';
/** The SpiceDB type of every item that is checked (schema.zed). */
export const CHECKED_RESOURCE = 'resource';

type ObjectRef = Relationship['resource'];
type SubjectRef = Relationship['subject'];

export function objectKey(type: string, id: string): string {
  // SpiceDB ids never contain ':' (object-id.ts), so the key is unambiguous.
  return `${type}:${id}`;
}

function pairKey(resource: ObjectRef, user: SubjectRef): string {
  // SpiceDB ids contain neither ' ' nor '>': no pair or agents key equals another key.
  return `${resource.type}:${resource.id} ${user.id}`;
}

function agentsKey(resource: ObjectRef): string {
  return `${resource.type}:${resource.id}>${AGENT}`;
}

/** A user itself (not a userset) as the subject of a checked resource's relationship or of a check. */
function isResourceUserPair(resource: ObjectRef, subject: SubjectRef): boolean {
  return resource.type === CHECKED_RESOURCE && subject.type === USER && subject.relation === undefined;
}

export function relationshipKeys({ resource, subject }: Relationship): string[] {
  if (isResourceUserPair(resource, subject)) return [pairKey(resource, subject), agentsKey(resource)];
  const ends = [objectKey(resource.type, resource.id), objectKey(subject.type, subject.id)];
  return GROUPINGS.has(resource.type) ? [...ends, MEMBERSHIPS_KEY] : ends;
}

export function checkKeys({
  resource,
  subject,
}: Pick<CheckPermissionInput, 'resource' | 'subject'>): string[] {
  const ends = [objectKey(resource.type, resource.id), objectKey(subject.type, subject.id)];
  if (isResourceUserPair(resource, subject)) return [...ends, pairKey(resource, subject)];
  return subject.type === AGENT ? [...ends, agentsKey(resource), MEMBERSHIPS_KEY] : ends;
}
