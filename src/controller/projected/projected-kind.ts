import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { Condition } from '../../api/v1alpha1/index.js';
import type { ReconcileResult } from '../../runtime/index.js';
import type { Relationship } from '../../spicedb/client.js';
import type { TupleKey } from '../../verdict/tuple-key.js';
import type { ManagedRelation } from '../managed-relations.js';
import type { StatusChange } from '../reconcile-flow.js';

/** The status fields every projected resource has (src/api/v1alpha1/status-fields.ts). */
export interface ProjectedStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  zedToken?: string;
}

/** A resource the controller projects onto SpiceDB relationships: a PolicyGrant, a Membership, a Delegation. */
export interface ProjectedObject {
  metadata: V1ObjectMeta;
  status?: ProjectedStatus;
}

/** Why a resource gives no relationships now: the reason and message of its Enforced=False condition. */
export interface Withdrawal<Reason extends string = string> {
  reason: Reason;
  message: string;
}

/** What an object should give now: its relationships, or, when it gives none, why not. */
export type Decision<Reason extends string = string> =
  | { relationships: Relationship[]; withdrawal?: undefined }
  | { relationships?: undefined; withdrawal: Withdrawal<Reason> };

/** A projection that failed: SpiceDB refused it, or an id cannot be a SpiceDB object id. */
export interface FailedProjection {
  kind: 'failed';
  message: string;
}

/**
 * Who accounts for a tuple, decided once for a batch of questions (a grant's verdicts are remembered within it):
 * the relationship some object of the kind wants under `key` now, or undefined.
 */
export interface TupleAccounting {
  /** As any object other than `except` (an object key) wants it. */
  accountFor(key: TupleKey, except?: string): Relationship | undefined;
  /**
   * What the resync may write: only the tuple of an object that holds its finalizer (and, for a grant, has had
   * its first reconcile), since before that nothing guarantees that deleting the object removes the tuple again.
   */
  accountForWritable(key: TupleKey): Relationship | undefined;
}

/** What the drift resync needs of a kind: the relations it is the only writer of, and what it wants there. */
export interface ResyncedKind {
  readonly relations: readonly ManagedRelation[];
  /** The relationships the objects want now, object by object. */
  wanted(now: Date): Iterable<readonly Relationship[]>;
  accounting(now: Date): TupleAccounting;
}

/** What a status records of what was last written, when a recall can say more than the status's reason. */
export type Recall = { keys: TupleKey[]; zedToken: string | undefined } | { repair: string[] };

/**
 * One kind of resource the shared projection machinery (projector, reconciler, resync) projects: its cache,
 * its decision, and hooks for what is its own (the status, what a withdrawal removes, a recall after a restart).
 */
export interface ProjectedKind<
  T extends ProjectedObject,
  Outcome,
  Status,
  Reason extends string = string,
> extends ResyncedKind {
  /** Lowercase, for span names, logs and the coordinator: `policygrant`, `membership`. */
  readonly name: string;
  object(key: string): T | undefined;
  all(): T[];
  /** The keys of the objects whose projection includes `key`, giving it or not. */
  keysProjecting(key: TupleKey): string[];
  /** Throws InvalidObjectIdError for an id SpiceDB can't hold. */
  decide(object: T, now: Date): Decision<Reason>;
  /** What a withdrawal deletes besides what was last written: every tuple the spec could give. */
  candidates(object: T): TupleKey[];
  /** Whether the object must hold the finalizer before anything is written for it. */
  wantsFinalizer(object: T): boolean;
  /** What a reconcile achieved, for the status. */
  outcome(decision: Decision<Reason>, zedToken: string | undefined): Outcome;
  nextStatus(object: T, outcome: Outcome | FailedProjection, now: Date): StatusChange<Status>;
  /** Runs once the status write landed (an Event on a transition, say). */
  statusWritten?(written: T, change: StatusChange<Status>, now: Date): void;
  /** Whether a status whose reason matches `decision` also says all of what was written (a count, a token). */
  statusRecords?(object: T, decision: Decision<Reason>): boolean;
  /**
   * When this process has no record and the status does not match the decision: what the status says was
   * last written (an edit's old tuples go at once), or the objects to read because something may have been.
   */
  recall?(object: T, hadFinalizer: boolean): Recall | undefined;
  /** When the object must be looked at again although nothing changes it (an expiry). */
  requeueAfter(object: T, now: Date): ReconcileResult | undefined;
}

/** The Enforced reasons every projected kind shares; `withdrawal` adds the kind's own. */
export const ProjectionReason = {
  /** True: the object's relationships are written. */
  Projected: 'Projected',
  /** False: SpiceDB failed the write (retried with backoff), or an id cannot be a SpiceDB object id. */
  ProjectionFailed: 'ProjectionFailed',
} as const;
