import type { KubernetesObject } from '@kubernetes/client-node';
import { objectKey } from './object-key.js';

export interface RelistDiff<T> {
  added: T[];
  updated: { old: T; current: T }[];
  /** Objects gone from the server, as last seen; a delete missed during an outage still reaches handlers. */
  deleted: T[];
}

const resourceVersionOf = (obj: KubernetesObject): string | undefined => obj.metadata?.resourceVersion;

/** What a fresh list says changed, compared with what the cache holds. Unchanged objects are left out. */
export function diffRelist<T extends KubernetesObject>(
  cached: ReadonlyMap<string, T>,
  listed: T[],
): RelistDiff<T> {
  const diff: RelistDiff<T> = { added: [], updated: [], deleted: [] };
  const listedKeys = new Set<string>();
  for (const current of listed) {
    const key = objectKey(current);
    listedKeys.add(key);
    const old = cached.get(key);
    if (old === undefined) {
      diff.added.push(current);
    } else if (resourceVersionOf(old) !== resourceVersionOf(current)) {
      diff.updated.push({ old, current });
    }
  }
  for (const [key, old] of cached) {
    if (!listedKeys.has(key)) {
      diff.deleted.push(old);
    }
  }
  return diff;
}
