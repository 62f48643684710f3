import type { KubernetesObject } from '@kubernetes/client-node';
import type { IndexFunc, Indexer } from '../kube/indexes.js';
import { objectKey } from './object-key.js';

/**
 * The object keys under one indexed value: most values (a tuple key, an item id) index a single object, and a
 * bare key costs a fraction of a Set (at 100,000 objects, tens of megabytes of heap).
 */
type IndexedKeys = string | Set<string>;

/** Objects by key, plus named secondary indexes that every upsert and delete keeps current. */
export class IndexedCache<T> implements Indexer<T> {
  private readonly objects = new Map<string, T>();
  private readonly indexFuncs = new Map<string, IndexFunc<T>>();
  /** index name → indexed value → object keys */
  private readonly indices = new Map<string, Map<string, IndexedKeys>>();

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  /** A read-only view of the objects by key (live: do not hold it across changes). */
  view(): ReadonlyMap<string, T> {
    return this.objects;
  }

  /** Adds an index and fills it from the objects already cached. */
  addIndex(name: string, indexFunc: IndexFunc<T>): void {
    if (this.indexFuncs.has(name)) {
      throw new Error(`index "${name}" already exists`);
    }
    this.indexFuncs.set(name, indexFunc);
    this.indices.set(name, new Map());
    for (const [key, obj] of this.objects) {
      this.addToIndex(name, indexFunc(obj), key);
    }
  }

  byIndex(name: string, value: string): T[] {
    return this.indexKeys(name, value).map((key) => this.objects.get(key) as T);
  }

  indexKeys(name: string, value: string): string[] {
    const index = this.indices.get(name);
    if (!index) {
      throw new Error(`index "${name}" does not exist`);
    }
    const keys = index.get(value);
    if (keys === undefined) return [];
    return typeof keys === 'string' ? [keys] : [...keys];
  }

  /** Stores `obj` under `key` and returns what was there before. */
  upsert(key: string, obj: T): T | undefined {
    const old = this.objects.get(key);
    this.objects.set(key, obj);
    this.reindex(key, old, obj);
    return old;
  }

  /** Removes `key` and returns what was there. */
  delete(key: string): T | undefined {
    const old = this.objects.get(key);
    if (old !== undefined) {
      this.objects.delete(key);
      this.reindex(key, old, undefined);
    }
    return old;
  }

  private reindex(key: string, old: T | undefined, current: T | undefined): void {
    for (const [name, indexFunc] of this.indexFuncs) {
      if (old !== undefined) {
        this.removeFromIndex(name, indexFunc(old), key);
      }
      if (current !== undefined) {
        this.addToIndex(name, indexFunc(current), key);
      }
    }
  }

  private addToIndex(name: string, values: string[], key: string): void {
    const index = this.indices.get(name) as Map<string, IndexedKeys>;
    for (const value of values) {
      const keys = index.get(value);
      if (keys === undefined) index.set(value, key);
      else if (typeof keys !== 'string') keys.add(key);
      else if (keys !== key) index.set(value, new Set([keys, key]));
    }
  }

  private removeFromIndex(name: string, values: string[], key: string): void {
    const index = this.indices.get(name) as Map<string, IndexedKeys>;
    for (const value of values) {
      const keys = index.get(value);
      if (keys === key) {
        index.delete(value);
      } else if (typeof keys !== 'string' && keys?.delete(key) && keys.size === 1) {
        index.set(value, keys.values().next().value as string);
      }
    }
  }
}

/**
 * A list of objects as an indexer, keyed as an informer keys them (client-go's NewIndexer, filled once): what a
 * command-line tool read from the cluster or parsed from files. Of two objects with one key, the later is kept.
 */
export function indexerOf<T extends KubernetesObject>(objects: readonly T[]): Indexer<T> {
  const cache = new IndexedCache<T>();
  for (const obj of objects) cache.upsert(objectKey(obj), obj);
  return cache;
}
