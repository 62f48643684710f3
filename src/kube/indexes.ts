/** Maps an object to the values it is indexed under (client-go's IndexFunc). Must not throw. */
export type IndexFunc<T> = (obj: T) => string[];

/**
 * What a view needs of a cache (client-go's cache.Indexer): the runtime's Informer is one, and so is its
 * IndexedCache filled from a list of objects.
 */
export interface Indexer<T> {
  get(key: string): T | undefined;
  list(): T[];
  byIndex(name: string, value: string): T[];
  addIndex(name: string, indexFunc: IndexFunc<T>): void;
}

/** A named index (client-go's Indexers entry); `values` may answer undefined for "not indexed". */
export interface IndexDefinition<T> {
  readonly name: string;
  readonly values: (obj: T) => (string | undefined)[];
}

/** Registers the definition on the cache; a definition that throws indexes the object nowhere. */
export function registerIndex<T>(
  cache: Pick<Indexer<T>, 'addIndex'>,
  { name, values }: IndexDefinition<T>,
): void {
  cache.addIndex(name, safely(values));
}

/** Index functions must not throw: a malformed object is indexed nowhere. */
function safely<T>(values: (obj: T) => (string | undefined)[]): IndexFunc<T> {
  return (obj) => {
    try {
      return values(obj).filter((value): value is string => value !== undefined);
    } catch {
      return [];
    }
  };
}
