import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import type { PolicyGrant, PolicyGrantSpec, PolicyGrantStatus } from '../../api/v1alpha1/index.js';
import type { InternPool } from '../../runtime/index.js';
import { latestChanges } from '../audit/grant-change.js';
import { requesterAnnotations } from '../audit/kubernetes-actor.js';
import { TRACEPARENT_ANNOTATION } from '../../observability/tracing.js';
import { cachedMetadata, internTime, type CachedMetadata } from '../cached-metadata.js';

// Strings unique to a grant (its user, zedToken, subjects) are kept as parsed: pooling them would only fill the
// pool.

/**
 * A PolicyGrant as the controller caches it: spec and status whole (the verdicts read the spec; the status is
 * compared field by field and written back whole through the status subresource), the metadata its readers
 * use, and of managedFields only the entries of the latest change of the grant itself and of the annotations
 * only the requester's stamp (the audit's actor).
 * Parts repeated across grants are shared and frozen: a cached grant is never changed in place, nor written
 * back whole (finalizers are merge patches, statuses carry the status only).
 */
export interface CachedGrant extends Omit<PolicyGrant, 'metadata'> {
  /** Of the annotations, only the audit's stamp of the requester. */
  metadata: CachedMetadata & { annotations?: Record<string, string> };
}

function cachedSpec(spec: PolicyGrantSpec, pool: InternPool): PolicyGrantSpec {
  return {
    policyType: spec.policyType,
    userId: spec.userId,
    itemId: pool.intern(spec.itemId),
    itemType: pool.intern(spec.itemType),
    expiryTime: pool.intern(spec.expiryTime),
    constraints: pool.share(spec.constraints),
    issuerId: pool.intern(spec.issuerId),
    revokedAt: pool.intern(spec.revokedAt),
    revokedBy: pool.intern(spec.revokedBy),
  };
}

function cachedStatus(
  status: PolicyGrantStatus | undefined,
  pool: InternPool,
): PolicyGrantStatus | undefined {
  if (status === undefined) return undefined;
  const { projected } = status;
  return {
    observedGeneration: status.observedGeneration,
    state: status.state,
    conditions: pool.share(status.conditions),
    relationships: status.relationships,
    zedToken: status.zedToken,
    access: pool.intern(status.access),
    namespaceBinding: pool.intern(status.namespaceBinding),
    projected: projected && {
      resource: pool.intern(projected.resource),
      relations: pool.share(projected.relations),
      subjects: projected.subjects,
    },
  };
}

/** Only the latest change's entries, without their field sets (`fieldsV1`, the bulk of an object's JSON). */
function cachedFieldManagers(entries: V1ManagedFieldsEntry[] | undefined, pool: InternPool) {
  const latest = latestChanges(entries).map(({ manager, operation, time }) => ({
    manager: pool.intern(manager),
    operation: pool.intern(operation),
    time: internTime(pool, time),
  }));
  return pool.share(latest);
}

/**
 * `kept` with the grant's traceparent annotation when it has one: the reconcile's span links to the request
 * that wrote the grant (present only on grants a traced ACL API created).
 */
function withTraceparentOf(
  metadata: PolicyGrant['metadata'],
  kept: Record<string, string> | undefined,
): Record<string, string> | undefined {
  const traceparent = metadata.annotations?.[TRACEPARENT_ANNOTATION];
  return traceparent === undefined ? kept : { ...kept, [TRACEPARENT_ANNOTATION]: traceparent };
}

/** The grant informer's transform: a compact record of each grant, repeated parts shared through `pool`. */
export function grantCacheTransform(pool: InternPool): (grant: PolicyGrant) => CachedGrant {
  return (grant) => ({
    apiVersion: grant.apiVersion,
    kind: grant.kind,
    metadata: {
      ...cachedMetadata(grant.metadata, pool, cachedFieldManagers(grant.metadata.managedFields, pool)),
      annotations: withTraceparentOf(grant.metadata, pool.share(requesterAnnotations(grant.metadata))),
    },
    spec: cachedSpec(grant.spec, pool),
    status: cachedStatus(grant.status, pool),
  });
}
