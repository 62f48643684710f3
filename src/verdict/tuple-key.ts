import type { Relationship } from '../spicedb/client.js';

/**
 * A relationship without its expiration, as one string: SpiceDB's own notation,
 * `resource:<id>#<relation>@<subjectType>:<subjectId>[#<subjectRelation>]`. Keys identify a tuple (SpiceDB
 * allows one tuple per key, whatever its expiration), so sets of keys do the controller's set arithmetic.
 * Unambiguous because object ids never contain `:`, `#` or `@` (SpiceDB allows `[a-zA-Z0-9/_|\-=+]`).
 */
export type TupleKey = string;

const TUPLE_KEY =
  /^([a-z][a-z0-9_]*):([^:#@]+)#([a-z][a-z0-9_]*)@([a-z][a-z0-9_]*):([^:#@]+)(?:#([a-z][a-z0-9_]*))?$/;

export function tupleKey(relationship: Relationship): TupleKey {
  const { resource, relation, subject } = relationship;
  const subjectRelation = subject.relation ? `#${subject.relation}` : '';
  // Joined, not concatenated: V8 keeps a concatenated string as a tree of its parts (a rope) for as long as it
  // lives, several times the size of the flat string join makes; keys are held by the hundred thousand (the
  // caches' tuple indexes, the resync's wanted set).
  return [
    resource.type,
    ':',
    resource.id,
    '#',
    relation,
    '@',
    subject.type,
    ':',
    subject.id,
    subjectRelation,
  ].join('');
}

/** The relationship a key names (no expiration: a delete needs none). */
export function parseTupleKey(key: TupleKey): Relationship {
  const match = TUPLE_KEY.exec(key);
  if (!match) throw new Error(`not a tuple key: ${JSON.stringify(key.slice(0, 200))}`);
  const [, resourceType = '', resourceId = '', relation = '', subjectType = '', subjectId = '', subjectRel] =
    match;
  return {
    resource: { type: resourceType, id: resourceId },
    relation,
    subject: { type: subjectType, id: subjectId, ...(subjectRel ? { relation: subjectRel } : {}) },
  };
}

/** `resource:<id>`: the object a tuple is on; writers of one object take turns (see keyed-mutex.ts). */
export function objectOfTupleKey(key: TupleKey): string {
  return key.slice(0, key.indexOf('#'));
}
