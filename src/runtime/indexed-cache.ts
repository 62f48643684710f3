/** Maps an object to the values it is indexed under (client-go's IndexFunc). Must not throw. */
export type IndexFunc<T> = (obj: T) => string[];

/** Objects by key, plus named secondary indexes that every upsert and delete keeps current. */
export class IndexedCache<T> {
  private readonly objects = new Map<string, T>();
  private readonly indexFuncs = new Map<string, IndexFunc<T>>();
  /** index name → indexed value → object keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  values(): T[] {
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
    return [...(index.get(value) ?? [])];
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
    const index = this.indices.get(name) as Map<string, Set<string>>;
    for (const value of values) {
      const keys = index.get(value) ?? new Set<string>();
      keys.add(key);
      index.set(value, keys);
    }
  }

  private removeFromIndex(name: string, values: string[], key: string): void {
    const index = this.indices.get(name) as Map<string, Set<string>>;
    for (const value of values) {
      const keys = index.get(value);
      keys?.delete(key);
      if (keys?.size === 0) {
        index.delete(value);
      }
    }
  }
}
