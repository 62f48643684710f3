import type { KubernetesObject } from '@kubernetes/client-node';
import {
  objectKey,
  type Controller,
  type Informer,
  type Manager,
  type WatchSource,
} from '../../runtime/index.js';
import { SHUTDOWN_TIMEOUT_MS, type ControllerDeps } from '../controller-deps.js';
import type { ProjectedObject } from './projected-kind.js';
import { ProjectedProjector } from './projected-projector.js';
import { ProjectedReconciler, type ProjectedReconcilerOptions } from './projected-reconciler.js';
import type { ProjectedView } from './projected-view.js';

export interface ProjectedControllerSpec<T extends ProjectedObject & KubernetesObject> {
  /** The informer the controller is for. */
  cache: Informer<T>;
  world: ProjectedView<T>;
  writer: ProjectedReconcilerOptions<T>['writer'];
  /** What else makes an object worth another look. */
  watches?: WatchSource[];
  /** Whether its objects are reconciled again once SpiceDB recovered. */
  rewriteOnRecovery: boolean;
}

/**
 * A controller for a projected kind (Memberships, Delegations): the generic projector and reconciler over the
 * kind's view, its record of the last writes tracked by the projection coordinator.
 */
export function setupProjectedController<T extends ProjectedObject & KubernetesObject>(
  manager: Manager,
  deps: ControllerDeps,
  spec: ProjectedControllerSpec<T>,
): Controller<T> {
  const { projections } = deps;
  const { world } = spec;
  const kind = world.kind.name;
  const projector = new ProjectedProjector<T>({
    store: deps.store,
    world,
    mutex: deps.mutex,
    onTuplesDeleted: (keys, except) => projections.recheck(kind, keys, except),
  });
  projections.track(kind, {
    keysProjecting: (key) => world.withTupleKey(key).map(objectKey),
    forget: (key) => projector.forget(key),
    forgetAll: () => projector.forgetAll(),
  });
  const reconciler = new ProjectedReconciler<T>({
    world,
    projector,
    writer: spec.writer,
    logger: deps.logger,
    ...deps.spicedbHealth,
  });
  const controller = manager.addController<T>({
    name: kind,
    for: spec.cache,
    ...(spec.watches ? { watches: spec.watches } : {}),
    reconcile: reconciler.reconcile,
    maxConcurrentReconciles: deps.config.maxConcurrentReconciles,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  });
  const rewrite = () => world.all().map(objectKey);
  projections.bind(kind, controller, spec.rewriteOnRecovery ? rewrite : undefined);
  return controller;
}
