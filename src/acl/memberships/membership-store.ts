import {
  GROUP_VERSION,
  MEMBERSHIP_KIND,
  membershipName,
  type Membership,
  type MembershipKey,
  type MembershipSpec,
} from '../../api/v1alpha1/index.js';
import { HttpError } from '../../http/errors.js';
import type { AclCache } from '../acl-cache.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { isConflict, isNotFound } from '../../kube/api-error.js';
import { paths } from '../resources.js';

/** Attempts of one read-modify-write before it gives up on a membership that keeps changing. */
export const MAX_WRITE_ATTEMPTS = 8;

/**
 * Computes the new spec from the current one (undefined when there is no object); answering the spec it was
 * given leaves the object untouched.
 */
export type SpecUpdate<R> = (spec: MembershipSpec | undefined) => {
  spec: MembershipSpec | undefined;
  result: R;
};

/**
 * Membership objects in the ACL namespace, changed by read-modify-write under optimistic concurrency: the
 * first attempt starts from the informer cache (no read), a write refused because the object changed or
 * appeared meanwhile (409), or vanished (404), starts again from a fresh read. Other errors are the
 * KubeClient's.
 */
export class MembershipStore {
  constructor(
    private readonly kube: KubeClient,
    private readonly cache: AclCache,
    readonly namespace: string,
  ) {}

  async update<R>(key: MembershipKey, update: SpecUpdate<R>): Promise<R> {
    const name = membershipName(key);
    // An object of this key under another name (applied with kubectl) is not the one this store writes.
    const cached = this.cache.membership(key);
    let current = cached?.metadata.name === name ? cached : undefined;
    for (let attempt = 1; ; attempt++) {
      const { spec, result } = update(current?.spec);
      if (spec === current?.spec || spec === undefined) return result;
      try {
        await this.write(name, current, spec);
        return result;
      } catch (error) {
        if (!isConflict(error) && !isNotFound(error)) throw error;
        if (attempt === MAX_WRITE_ATTEMPTS) throw keptChanging(name, error);
      }
      current = await this.read(name);
    }
  }

  private write(name: string, current: Membership | undefined, spec: MembershipSpec): Promise<Membership> {
    if (!current) {
      return this.kube.call({
        method: 'POST',
        path: paths.memberships(this.namespace),
        body: { apiVersion: GROUP_VERSION, kind: MEMBERSHIP_KIND, metadata: { name }, spec },
      });
    }
    // A replace carries the resourceVersion read, so it fails with 409 if anyone wrote in between; status is a
    // subresource and metadata (finalizers, labels) goes back as it was read.
    return this.kube.call({
      method: 'PUT',
      path: paths.membership(this.namespace, name),
      body: { ...current, spec },
    });
  }

  /**
   * The object as the API server has it now. A list narrowed to the one name rather than a get: the informer
   * already needs list on memberships, so the ACL API's Role needs no get for them, and list items carry no
   * kind, which a replace must name.
   */
  private async read(name: string): Promise<Membership | undefined> {
    const list = await this.kube.call<{ items: Membership[] }>({
      method: 'GET',
      path: paths.memberships(this.namespace),
      query: { fieldSelector: `metadata.name=${name}` },
    });
    const item = list.items[0];
    return item && { ...item, apiVersion: GROUP_VERSION, kind: MEMBERSHIP_KIND };
  }
}

function keptChanging(name: string, cause: unknown): HttpError {
  return new HttpError(
    'Conflict',
    `membership ${name} kept changing during ${MAX_WRITE_ATTEMPTS} attempts; retry (what was applied stays applied)`,
    { cause },
  );
}
