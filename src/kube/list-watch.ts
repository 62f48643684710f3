import type { KubernetesObject } from '@kubernetes/client-node';
import type { ApiStatus } from './api-error.js';
import type { KubeClient } from './kube-client.js';
import { openWatchStream } from './watch-stream.js';
import type { StopWatch } from './watch-stream.js';

export interface SelectorOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ListOptions<T> extends SelectorOptions {
  signal?: AbortSignal;
  /**
   * Applied by the source to each item as its page arrives, so that a list of many objects never holds more
   * than one page of them untransformed (see Informer's `transform`).
   */
  transform?: (obj: T) => T;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

export interface WatchOptions extends SelectorOptions {
  resourceVersion: string;
  timeoutSeconds: number;
  allowWatchBookmarks: boolean;
}

export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; object: KubernetesObject }
  | { type: 'ERROR'; object: ApiStatus };

export interface WatchHandlers<T> {
  onEvent(event: WatchEvent<T>): void;
  /** Called once. `error` undefined: the server closed the stream normally. A 410 is a KubeApiError. */
  onClose(error?: unknown): void;
}

/** Where an informer gets its objects from: the kube-apiserver, or a fake in tests. */
export interface ListWatchSource<T> {
  /** A complete, consistent list (all pages) and the resourceVersion to watch from. */
  list(options: ListOptions<T>): Promise<ListResult<T>>;
  watch(options: WatchOptions, handlers: WatchHandlers<T>): StopWatch;
}

/** A list page as the server sends it (plain JSON: `continue`, not the generated clients' `_continue`). */
interface ListPage<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

const LIST_PAGE_SIZE = 500;
const LIST_TIMEOUT_MS = 60_000;

const WATCH_EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

function asWatchEvent<T>(raw: unknown): WatchEvent<T> {
  const event = raw as { type?: unknown; object?: unknown };
  if (
    typeof event.type !== 'string' ||
    !WATCH_EVENT_TYPES.has(event.type) ||
    typeof event.object !== 'object'
  ) {
    throw new Error(`malformed watch event: ${JSON.stringify(raw).slice(0, 200)}`);
  }
  return event as WatchEvent<T>;
}

/**
 * List and watch of the collection at `path`, e.g. `/api/v1/namespaces/ns/configmaps` or
 * `/apis/acl.policygrant.dev/v1alpha1/policygrants` (all namespaces).
 */
export function kubeListWatch<T extends KubernetesObject>(
  kube: KubeClient,
  path: string,
): ListWatchSource<T> {
  return {
    async list({ labelSelector, fieldSelector, signal, transform }) {
      const items: T[] = [];
      let continueToken: string | undefined;
      let resourceVersion = '';
      do {
        const page = await kube.call<ListPage<T>>({
          method: 'GET',
          path,
          query: { labelSelector, fieldSelector, limit: LIST_PAGE_SIZE, continue: continueToken },
          signal,
          timeoutMs: LIST_TIMEOUT_MS,
        });
        for (const item of page.items) items.push(transform ? transform(item) : item);
        resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
        continueToken = page.metadata?.continue || undefined;
      } while (continueToken);
      return { items, resourceVersion };
    },

    watch({ resourceVersion, timeoutSeconds, allowWatchBookmarks, labelSelector, fieldSelector }, handlers) {
      return openWatchStream(
        kube,
        path,
        { resourceVersion, timeoutSeconds, allowWatchBookmarks, labelSelector, fieldSelector },
        {
          onEvent: (raw) => handlers.onEvent(asWatchEvent<T>(raw)),
          onClose: (error) => handlers.onClose(error),
        },
      );
    },
  };
}
