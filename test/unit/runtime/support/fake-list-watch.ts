import type { V1ConfigMap } from '@kubernetes/client-node';
import type { ApiStatus } from '../../../../src/kube/api-error.js';
import type {
  ListOptions,
  ListResult,
  ListWatchSource,
  WatchHandlers,
  WatchOptions,
} from '../../../../src/kube/list-watch.js';

interface FakeWatch {
  options: WatchOptions;
  handlers: WatchHandlers<V1ConfigMap>;
  stopped: boolean;
}

/** An in-memory API server for one namespace of ConfigMaps, with the faults an informer must survive. */
export class FakeListWatch implements ListWatchSource<V1ConfigMap> {
  private readonly objects = new Map<string, V1ConfigMap>();
  private revision = 100;
  readonly watches: FakeWatch[] = [];
  readonly listCalls: ListOptions<V1ConfigMap>[] = [];
  /** Errors the next list calls throw, one each. */
  readonly listFailures: Error[] = [];

  async list(options: ListOptions<V1ConfigMap>): Promise<ListResult<V1ConfigMap>> {
    this.listCalls.push(options);
    const failure = this.listFailures.shift();
    if (failure) {
      throw failure;
    }
    return {
      items: [...this.objects.values()].map(
        (obj) => options.transform?.(structuredClone(obj)) ?? structuredClone(obj),
      ),
      resourceVersion: String(this.revision),
    };
  }

  watch(options: WatchOptions, handlers: WatchHandlers<V1ConfigMap>): () => void {
    const watch: FakeWatch = { options, handlers, stopped: false };
    this.watches.push(watch);
    return () => {
      watch.stopped = true;
    };
  }

  activeWatches(): FakeWatch[] {
    return this.watches.filter((watch) => !watch.stopped);
  }

  lastWatch(): FakeWatch {
    const watch = this.watches.at(-1);
    if (!watch) {
      throw new Error('no watch was opened');
    }
    return watch;
  }

  /** Changes the store; `silently` leaves the watches unaware, as during an outage. */
  put(name: string, data: Record<string, string>, { silently = false } = {}): V1ConfigMap {
    const existed = this.objects.has(name);
    this.revision += 1;
    const obj: V1ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'ns', resourceVersion: String(this.revision) },
      data,
    };
    this.objects.set(name, obj);
    if (!silently) {
      this.emit({ type: existed ? 'MODIFIED' : 'ADDED', object: structuredClone(obj) });
    }
    return obj;
  }

  remove(name: string, { silently = false } = {}): void {
    const obj = this.objects.get(name);
    if (!obj) {
      throw new Error(`no ${name}`);
    }
    this.objects.delete(name);
    this.revision += 1;
    if (!silently) {
      this.emit({
        type: 'DELETED',
        object: {
          ...structuredClone(obj),
          metadata: { ...obj.metadata, resourceVersion: String(this.revision) },
        },
      });
    }
  }

  bookmark(): void {
    this.revision += 1;
    this.emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(this.revision) } } });
  }

  sendError(status: ApiStatus): void {
    this.emit({ type: 'ERROR', object: status });
  }

  /** Ends every open watch, as a server timeout (no error) or a broken connection (error). */
  closeWatches(error?: unknown): void {
    for (const watch of this.activeWatches()) {
      watch.stopped = true;
      watch.handlers.onClose(error);
    }
  }

  private emit(event: Parameters<WatchHandlers<V1ConfigMap>['onEvent']>[0]): void {
    for (const watch of this.activeWatches()) {
      watch.handlers.onEvent(event);
    }
  }
}
