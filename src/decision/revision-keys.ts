import type { CheckPermissionInput, Relationship } from '../spicedb/client.js';

/**
 * What the barrier remembers a change by: the objects at both ends of a changed relationship, and what a check
 * looks up: its resource and its subject. `organization:o#member@user:u` marks org o and user u. Enough for a
 * user's or group's check, where every path from a resource to the subject has at most two relationships (a
 * resource's relationship to a group or organisation, and that one's member): any change on such a path
 * touches the check's resource or its subject.
 *
 * An agent's check is one longer: resource → organisation or group → member (the agent's owner) → the owner's
 * agent. A membership in the middle touches neither the resource nor the agent, so every membership change
 * also marks MEMBERSHIPS_KEY, which an agent's check looks up: after any membership change, agents' checks
 * are fresh for one retention (user and group checks are not affected).
 */
export const MEMBERSHIPS_KEY = 'memberships:*';

const GROUPINGS = new Set(['organization', 'group']);
const AGENT = 'agent';

export function objectKey(type: string, id: string): string {
  // SpiceDB ids never contain ':' (object-id.ts), so the key is unambiguous.
  return `${type}:${id}`;
}

export function relationshipKeys({ resource, subject }: Relationship): string[] {
  const ends = [objectKey(resource.type, resource.id), objectKey(subject.type, subject.id)];
  return GROUPINGS.has(resource.type) ? [...ends, MEMBERSHIPS_KEY] : ends;
}

export function checkKeys({
  resource,
  subject,
}: Pick<CheckPermissionInput, 'resource' | 'subject'>): string[] {
  const ends = [objectKey(resource.type, resource.id), objectKey(subject.type, subject.id)];
  return subject.type === AGENT ? [...ends, MEMBERSHIPS_KEY] : ends;
}
