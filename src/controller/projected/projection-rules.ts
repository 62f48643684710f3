import type { Relationship } from '../../spicedb/client.js';
import type { ManagedRelation } from '../managed-relations.js';
import type { ProjectedObject, Withdrawal } from './projected-kind.js';

/**
 * A kind whose projection follows from each object alone (a Membership, a Delegation): its relationships,
 * whether it gives them now, and why not. ProjectedView makes a projected kind of it.
 */
export interface ProjectionRules<T extends ProjectedObject> {
  /** Lowercase, for messages and logs: `membership`, `delegation`. */
  readonly name: string;
  /** The relations only this kind writes: the resync manages exactly these for it. */
  readonly relations: readonly ManagedRelation[];
  /** The relationships the object gives while it counts. Throws InvalidObjectIdError for an id SpiceDB can't hold. */
  project(object: T): Relationship[];
  /** Undefined while the object gives its relationships; otherwise why it does not (removed, revoked, expired). */
  withdrawal(object: T): Withdrawal | undefined;
  /** When the object stops counting by itself (an expiry): its reconcile runs again then. */
  countsUntil?(object: T): Date | undefined;
}

/** What a reconcile achieved for an object of such a kind. */
export type ProjectionOutcome =
  | { kind: 'projected'; zedToken: string | undefined }
  | { kind: 'withdrawn'; zedToken: string | undefined }
  | { kind: 'failed'; message: string };

export function counts<T extends ProjectedObject>(rules: ProjectionRules<T>, object: T): boolean {
  return rules.withdrawal(object) === undefined;
}
