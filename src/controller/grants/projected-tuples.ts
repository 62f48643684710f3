import type { ProjectedTuples } from '../../api/v1alpha1/index.js';
import type { Relationship } from '../../spicedb/client.js';
import type { TupleKey } from '../../verdict/tuple-key.js';

// What a grant last wrote, as its status records it: the relations × subjects on one resource that its
// projection is (src/verdict/projection.ts), small enough for a status (at most 10 relations and 100 subjects).

const subjectOf = ({ subject }: Relationship): string =>
  `${subject.type}:${subject.id}${subject.relation ? `#${subject.relation}` : ''}`;

/** The record of `relationships` (one grant's projection); undefined when there are none. */
export function recordProjected(relationships: readonly Relationship[]): ProjectedTuples | undefined {
  const [first] = relationships;
  if (!first) return undefined;
  return {
    resource: `${first.resource.type}:${first.resource.id}`,
    relations: [...new Set(relationships.map((relationship) => relationship.relation))],
    subjects: [...new Set(relationships.map(subjectOf))],
  };
}

/** The tuple keys a record names. */
export function projectedKeys(projected: ProjectedTuples | undefined): TupleKey[] {
  if (!projected) return [];
  return projected.relations.flatMap((relation) =>
    projected.subjects.map((subject) => `${projected.resource}#${relation}@${subject}`),
  );
}
