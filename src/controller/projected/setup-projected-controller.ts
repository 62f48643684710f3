import type { KubernetesObject } from '@kubernetes/client-node';
import {
  objectKey,
  type Controller,
  type Informer,
  type Manager,
  type WatchSource,
} from '../../runtime/index.js';
import { SHUTDOWN_TIMEOUT_MS, type ControllerDeps } from '../controller-deps.js';
import { LastWrites } from './last-writes.js';
import type { ProjectedKind, ProjectedObject } from './projected-kind.js';
import { ProjectedReconciler, type ProjectedReconcilerOptions } from './projected-reconciler.js';
import { Projector } from './projector.js';

export interface ProjectedControllerSpec<
  T extends ProjectedObject & KubernetesObject,
  Outcome,
  Status,
  Reason extends string,
> {
  kind: ProjectedKind<T, Outcome, Status, Reason>;
  /** The informer the controller is for. */
  cache: Informer<T>;
  writer: ProjectedReconcilerOptions<T, Outcome, Status, Reason>['writer'];
  /** What else makes an object worth another look. */
  watches?: WatchSource[];
  /** Whether its objects are reconciled again once SpiceDB recovered. */
  rewriteOnRecovery: boolean;
  beforeRelease?: (object: T) => Promise<void>;
}

/**
 * A controller for a projected kind (PolicyGrants, Memberships, Delegations): the projector and the reconciler
 * over the kind, its record of the last writes tracked by the projection coordinator, which drops it when a
 * shared tuple went or SpiceDB changed behind this process.
 */
export function setupProjectedController<
  T extends ProjectedObject & KubernetesObject,
  Outcome,
  Status,
  Reason extends string,
>(
  manager: Manager,
  deps: ControllerDeps,
  spec: ProjectedControllerSpec<T, Outcome, Status, Reason>,
): Controller<T> {
  const { projections } = deps;
  const { kind } = spec;
  const lastWrites = new LastWrites();
  projections.track(kind.name, {
    keysProjecting: (key) => kind.keysProjecting(key),
    forget: (key) => lastWrites.forget(key),
    forgetAll: () => lastWrites.clear(),
  });
  const projector = new Projector<T>({
    store: deps.store,
    kind,
    lastWrites,
    mutex: deps.mutex,
    onTuplesDeleted: (keys, byKey) => projections.recheck(kind.name, keys, byKey),
  });
  const reconciler = new ProjectedReconciler({
    kind,
    projector,
    lastWrites,
    writer: spec.writer,
    logger: deps.logger,
    ...deps.spicedbHealth,
    ...(spec.beforeRelease ? { beforeRelease: spec.beforeRelease } : {}),
  });
  const controller = manager.addController<T>({
    name: kind.name,
    for: spec.cache,
    ...(spec.watches ? { watches: spec.watches } : {}),
    reconcile: reconciler.reconcile,
    maxConcurrentReconciles: deps.config.maxConcurrentReconciles,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });
  const rewrite = () => kind.all().map(objectKey);
  projections.bind(kind.name, controller, spec.rewriteOnRecovery ? rewrite : undefined);
  return controller;
}
