import { isConflict, isNotFound } from '../kube/index.js';

/**
 * The resourceVersions this controller's own writes replaced, per object (controller-runtime users call these
 * expectations). Our write to a grant triggers a watch event, which requeues the grant; but a reconcile can
 * start before the cache has that event, on the version we just replaced. Deciding on it would only earn a
 * 409. A reconcile that finds a replaced version in the cache stops: the event on its way brings it back.
 */
export class WriteExpectations {
  private readonly replaced = new Map<string, Set<string>>();

  /** Our write turned `before` into a newer version. */
  wrote(key: string, before: string | undefined): void {
    if (before === undefined) return;
    const versions = this.replaced.get(key) ?? new Set<string>();
    versions.add(before);
    this.replaced.set(key, versions);
  }

  /** Whether the cache still holds a version our own write replaced. Forgets once it holds a newer one. */
  isStale(key: string, cachedVersion: string | undefined): boolean {
    const versions = this.replaced.get(key);
    if (!versions) return false;
    if (cachedVersion !== undefined && versions.has(cachedVersion)) return true;
    this.replaced.delete(key);
    return false;
  }

  forget(key: string): void {
    this.replaced.delete(key);
  }

  /**
   * Awaits our write to the object whose cached version was `before`, and remembers it. Undefined when
   * Kubernetes answered that the object changed (409) or is gone (404): retry on what the cache sees next.
   */
  async unlessStale<T>(key: string, before: string | undefined, write: Promise<T>): Promise<T | undefined> {
    try {
      const written = await write;
      this.wrote(key, before);
      return written;
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) return undefined;
      throw error;
    }
  }
}
