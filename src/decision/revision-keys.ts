import type { CheckPermissionInput, Relationship } from '../spicedb/client.js';

/**
 * What the barrier remembers a change by: the objects at both ends of a changed relationship, and what a check
 * looks up: its resource and its subject. `organization:o#member@user:u` marks org o and user u. Enough for the
 * project's schema, where every path from a resource to a subject has at most two relationships (a resource's
 * relationship to a group or organisation, and that one's member): any change on such a path touches the
 * check's resource or its subject. A deeper schema (nested groups) would need the objects in between.
 */
export function objectKey(type: string, id: string): string {
  // SpiceDB ids never contain ':' (object-id.ts), so the key is unambiguous.
  return `${type}:${id}`;
}

export function relationshipKeys({ resource, subject }: Relationship): [string, string] {
  return [objectKey(resource.type, resource.id), objectKey(subject.type, subject.id)];
}

export function checkKeys({
  resource,
  subject,
}: Pick<CheckPermissionInput, 'resource' | 'subject'>): string[] {
  return [objectKey(resource.type, resource.id), objectKey(subject.type, subject.id)];
}
