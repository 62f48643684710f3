import { ACCESS_REQUEST_RESOURCE, type AccessRequest } from '../../api/v1alpha1/index.js';
import { ObjectWriter } from '../../kube/object-writer.js';
import type { Controller, Manager } from '../../runtime/index.js';
import { SHUTDOWN_TIMEOUT_MS, WRITE_TIMEOUT_MS, type ControllerDeps } from '../controller-deps.js';
import { AccessRequestReconciler } from './access-request-reconciler.js';

/** The AccessRequest controller: expires requests left PENDING, and announces each decision once. */
export function setupAccessRequestController(
  manager: Manager,
  deps: ControllerDeps,
): Controller<AccessRequest> {
  const { caches, audit } = deps;
  const reconciler = new AccessRequestReconciler({
    cache: caches.accessRequests,
    writer: new ObjectWriter<AccessRequest>(deps.kube, ACCESS_REQUEST_RESOURCE, {
      timeoutMs: WRITE_TIMEOUT_MS,
    }),
    events: deps.events,
    pendingTtlMs: deps.config.accessRequestPendingTtlMs,
    isLeader: () => manager.isLeader(),
    now: () => new Date(),
    ...(audit
      ? {
          audit: {
            store: audit.store,
            organisationOfItem: (itemId: string) =>
              caches.cluster.itemsWithId(itemId)[0]?.spec.organisationId,
          },
        }
      : {}),
  });
  return manager.addController<AccessRequest>({
    name: 'accessrequest',
    for: caches.accessRequests,
    reconcile: reconciler.reconcile,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });
}
