import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { Condition } from '../../api/v1alpha1/index.js';
import type { Relationship } from '../../spicedb/client.js';
import type { ManagedRelation } from '../managed-relations.js';

/** The status fields every projected resource has (src/api/v1alpha1/status-fields.ts). */
export interface ProjectedStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  zedToken?: string;
}

/** A resource the controller projects onto SpiceDB relationships: a Membership, a Delegation. */
export interface ProjectedObject {
  metadata: V1ObjectMeta;
  status?: ProjectedStatus;
}

/** Why a resource gives no relationships now: the reason and message of its Enforced=False condition. */
export interface Withdrawal {
  reason: string;
  message: string;
}

/**
 * What the shared projection machinery (world, projector, reconciler, status) needs to know of one kind of
 * resource: its relationships, whether it gives them now, and why not.
 */
export interface ProjectedKind<T extends ProjectedObject> {
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

/** What a reconcile achieved for an object. */
export type ProjectionOutcome =
  | { kind: 'projected'; zedToken: string | undefined }
  | { kind: 'withdrawn'; zedToken: string | undefined }
  | { kind: 'failed'; message: string };

/** The Enforced reasons every projected kind shares; `withdrawal` adds the kind's own. */
export const ProjectionReason = {
  /** True: the object's relationships are written. */
  Projected: 'Projected',
  /** False: SpiceDB failed the write (retried with backoff), or an id cannot be a SpiceDB object id. */
  ProjectionFailed: 'ProjectionFailed',
} as const;

export function counts<T extends ProjectedObject>(kind: ProjectedKind<T>, object: T): boolean {
  return kind.withdrawal(object) === undefined;
}
