import type { KubernetesObject } from '@kubernetes/client-node';
import type { ListWatchSource } from '../../src/kube/index.js';
import { Informer, stripForCache } from '../../src/runtime/index.js';

const PAGE_SIZE = 500;

/**
 * A list that never changes, served as the kube-apiserver serves one: pages of JSON, each parsed and its items
 * transformed in turn, so nothing holds more than a page of untransformed objects. The watch stays silent.
 */
function staticSource<T extends KubernetesObject>(
  count: number,
  make: (index: number) => T,
): ListWatchSource<T> {
  return {
    list: async ({ transform }) => {
      const items: T[] = [];
      for (let start = 0; start < count; start += PAGE_SIZE) {
        const page = Array.from({ length: Math.min(PAGE_SIZE, count - start) }, (_, i) => make(start + i));
        for (const item of JSON.parse(JSON.stringify(page)) as T[])
          items.push(transform ? transform(item) : item);
      }
      return { items, resourceVersion: '1' };
    },
    watch: () => () => undefined,
  };
}

/** An informer over `source`, started and synced, caching through `transform`. */
export async function syncedInformer<T extends KubernetesObject>(
  source: ListWatchSource<T>,
  transform: (obj: T) => T,
): Promise<Informer<T>> {
  const informer = new Informer<T>({ source, stallTimeoutMs: 3_600_000, transform });
  informer.start();
  await informer.waitForSync();
  return informer;
}

/** A synced informer over `count` objects made by `make`, cached through `transform` as the controller's are. */
export function staticInformer<T extends KubernetesObject>(
  count: number,
  make: (index: number) => T,
  transform: (obj: T) => T = stripForCache,
): Promise<Informer<T>> {
  return syncedInformer(staticSource(count, make), transform);
}
