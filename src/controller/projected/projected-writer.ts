import { CONTROLLER_FIELD_MANAGER } from '../../audit/field-managers.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { MERGE_PATCH, requestJson, type KubeRequest } from '../../runtime/kube-request.js';
import { finalizersPatch, statusUpdate } from '../object-writes.js';
import { RELATIONSHIPS_FINALIZER } from '../../api/v1alpha1/index.js';
import type { ProjectedObject, ProjectedStatus } from './projected-kind.js';

const WRITE_TIMEOUT_MS = 15_000;

/**
 * The controller's writes to a projected kind, each carrying the resourceVersion the decision was made on (a
 * concurrent change fails with 409 and the reconcile runs again on the newer object): the finalizer as a merge
 * patch, the status through the status subresource only (object-writes.ts). The finalizer is the grants' one:
 * the relationships go first.
 */
export class ProjectedWriter<T extends ProjectedObject> {
  constructor(
    private readonly kubeConfig: KubeConfig,
    /** The collection path of a namespace, e.g. membershipsPath. */
    private readonly collectionPath: (namespace: string) => string,
  ) {}

  updateStatus(object: T, status: ProjectedStatus, signal: AbortSignal): Promise<T> {
    const body = statusUpdate(object, status);
    return this.send({ method: 'PUT', path: `${this.pathOf(object)}/status`, body }, signal);
  }

  setFinalizer(object: T, present: boolean, signal: AbortSignal): Promise<T> {
    const others = (object.metadata.finalizers ?? []).filter((name) => name !== RELATIONSHIPS_FINALIZER);
    const finalizers = present ? [...others, RELATIONSHIPS_FINALIZER] : others;
    const body = finalizersPatch(object, finalizers);
    return this.send({ method: 'PATCH', path: this.pathOf(object), body, contentType: MERGE_PATCH }, signal);
  }

  private pathOf(object: T): string {
    const { namespace = '', name = '' } = object.metadata;
    return `${this.collectionPath(namespace)}/${encodeURIComponent(name)}`;
  }

  private send(request: KubeRequest, signal: AbortSignal): Promise<T> {
    return requestJson<T>(this.kubeConfig, {
      ...request,
      query: { fieldManager: CONTROLLER_FIELD_MANAGER },
      timeoutMs: WRITE_TIMEOUT_MS,
      signal,
    });
  }
}
