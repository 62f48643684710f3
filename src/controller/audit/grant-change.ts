import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import type { PolicyGrant } from '../../api/v1alpha1/index.js';
import type { AuditTarget } from '../../audit/audit-record.js';
import type { AuditChange } from '../../audit/audit-store.js';
import { ACL_API_FIELD_MANAGER, CONTROLLER_FIELD_MANAGER } from '../../audit/field-managers.js';
import { changeActor, UNKNOWN_DELETER, type ActorSource } from './kubernetes-actor.js';

// What the controller records of a grant change that did not come through the ACL API (docs/audit.md,
// "Changes made in Kubernetes"). Of the metadata only the requester's stamp and the manager, operation and time
// of each managedFields entry are read: the informer may drop the rest (fieldsV1, other annotations).

export const KUBERNETES_ACTIONS = {
  created: 'policy.created',
  changed: 'policy.changed',
  deleted: 'policy.deleted',
} as const;

/** Entries of this manager never account for a change of the grant's spec: it writes finalizers and status. */
const IGNORED_MANAGERS = new Set([CONTROLLER_FIELD_MANAGER]);

/** An Update or Apply of the object itself (not its status) by someone else than the controller. */
function isChangeOfObject(entry: V1ManagedFieldsEntry): boolean {
  return (
    (entry.operation === 'Update' || entry.operation === 'Apply') &&
    !entry.subresource &&
    entry.manager !== undefined &&
    !IGNORED_MANAGERS.has(entry.manager)
  );
}

const changeTime = (entry: V1ManagedFieldsEntry) => Date.parse(String(entry.time ?? 0)) || 0;

/**
 * The entries of the latest change of the object itself (Update or Apply, not of its status), the controller's
 * own left out: all that `latestManager` reads, so a cache may keep these and drop the other entries.
 */
export function latestChanges<T extends V1ManagedFieldsEntry>(entries: readonly T[] = []): T[] {
  const candidates = entries.filter(isChangeOfObject);
  const latest = Math.max(...candidates.map(changeTime));
  return candidates.filter((entry) => changeTime(entry) === latest);
}

/**
 * The manager of the latest change of the object itself (`latestChanges`). Times have whole seconds: when
 * several managers wrote in the latest second, the ACL API is left out (a change it did not make is never taken
 * for one of its own) and the others are all named, comma-separated.
 */
export function latestManager(entries: readonly V1ManagedFieldsEntry[] = []): string | undefined {
  const managers = [...new Set(latestChanges(entries).map((entry) => entry.manager as string))].sort();
  const others = managers.filter((manager) => manager !== ACL_API_FIELD_MANAGER);
  return (others.length > 0 ? others : managers).join(',') || undefined;
}

/**
 * The change the grant's current state shows, keyed so that it is recorded once: its deletion, or the
 * creation or spec change of its generation. Undefined when the ACL API made it (the API recorded it), which
 * only a trusted stamp naming the API's own identity shows. A deletion's actor is UNKNOWN_DELETER: the stamp
 * and the field managers name who wrote the grant, never who deleted it.
 */
export function grantChange(
  grant: PolicyGrant,
  target: AuditTarget,
  source: ActorSource,
): AuditChange | undefined {
  const { uid = '', generation = 1, deletionTimestamp, namespace, name, annotations } = grant.metadata;
  const object = `${namespace}/${name}`;
  if (deletionTimestamp) {
    const detail = `${object} deleted (Kubernetes does not record who deletes an object)`;
    return change(`${uid}/deleted`, UNKNOWN_DELETER, KUBERNETES_ACTIONS.deleted, target, 200, detail);
  }
  const manager = latestManager(grant.metadata.managedFields) ?? 'unknown';
  const actor = changeActor(source, annotations, manager);
  if (actor.aclApi) return undefined;
  const created = generation === 1;
  return change(
    `${uid}/${generation}`,
    actor.id,
    created ? KUBERNETES_ACTIONS.created : KUBERNETES_ACTIONS.changed,
    target,
    created ? 201 : 200,
    `${object} generation ${generation}`,
  );
}

function change(
  key: string,
  actorId: string,
  action: string,
  target: AuditTarget,
  status: number,
  detail: string,
): AuditChange {
  return {
    key,
    entry: {
      actor: { type: 'kubernetes', id: actorId },
      action,
      target,
      outcome: { status, detail },
      requestId: `kubernetes/${key}`,
    },
  };
}
