import type { KubeConfig } from '@kubernetes/client-node';
import { requestJson } from '../../runtime/kube-request.js';
import { RELATIONSHIPS_FINALIZER } from '../grants/grant-writer.js';
import type { ProjectedObject, ProjectedStatus } from './projected-kind.js';

const WRITE_TIMEOUT_MS = 15_000;

/**
 * The controller's writes to a projected kind: whole-object updates carrying the resourceVersion the decision
 * was made on (a concurrent change fails with 409 and the reconcile runs again on the newer object); status
 * through the status subresource only. The finalizer is the grants' one: the relationships go first.
 */
export class ProjectedWriter<T extends ProjectedObject> {
  constructor(
    private readonly kubeConfig: KubeConfig,
    /** The collection path of a namespace, e.g. membershipsPath. */
    private readonly collectionPath: (namespace: string) => string,
  ) {}

  updateStatus(object: T, status: ProjectedStatus, signal: AbortSignal): Promise<T> {
    return this.put(`${this.pathOf(object)}/status`, { ...object, status }, signal);
  }

  setFinalizer(object: T, present: boolean, signal: AbortSignal): Promise<T> {
    const others = (object.metadata.finalizers ?? []).filter((name) => name !== RELATIONSHIPS_FINALIZER);
    const finalizers = present ? [...others, RELATIONSHIPS_FINALIZER] : others;
    return this.put(this.pathOf(object), { ...object, metadata: { ...object.metadata, finalizers } }, signal);
  }

  private pathOf(object: T): string {
    const { namespace = '', name = '' } = object.metadata;
    return `${this.collectionPath(namespace)}/${encodeURIComponent(name)}`;
  }

  private put(path: string, body: T, signal: AbortSignal): Promise<T> {
    return requestJson<T>(this.kubeConfig, {
      method: 'PUT',
      path,
      body,
      timeoutMs: WRITE_TIMEOUT_MS,
      signal,
    });
  }
}
