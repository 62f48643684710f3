/**
 * Mutual exclusion per key, for async code. `lock` takes several keys in sorted order, so two callers that
 * share keys can never wait for each other in a cycle.
 *
 * The controller locks the SpiceDB objects (`resource:<id>`) it is about to write: whoever writes tuples of
 * an object decides what to write from the caches while holding its lock, so a decision ("no other grant
 * needs this tuple, delete it") cannot be overtaken by another writer's decision on the same tuples.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** Waits for every key; resolves with the function that releases them all. */
  async lock(keys: Iterable<string>): Promise<() => void> {
    const releases: (() => void)[] = [];
    for (const key of [...new Set(keys)].sort()) releases.push(await this.acquire(key));
    return () => releases.reverse().forEach((release) => release());
  }

  async withLock<T>(keys: Iterable<string>, work: () => Promise<T>): Promise<T> {
    const release = await this.lock(keys);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Keys held or waited for; for tests. */
  get size(): number {
    return this.tails.size;
  }

  private async acquire(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => held);
    this.tails.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
