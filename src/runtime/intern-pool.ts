const DEFAULT_CAPACITY = 16_384;

/**
 * Values by key, bounded: those of the current and of the previous generation (at most `capacity` each) are
 * found; when the current one is full it becomes the previous one and the oldest is let go.
 */
class Generations<V> {
  private current = new Map<string, V>();
  private previous = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  get(key: string, make: () => V): V {
    const known = this.current.get(key);
    if (known !== undefined) return known;
    const value = this.previous.get(key) ?? make();
    if (this.current.size >= this.capacity) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
    return value;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

/**
 * Hands out one instance of each repeated string (timestamps, field managers, item ids, messages) and of each
 * repeated small value (a finalizer list, a condition), so that thousands of cached objects share it instead of
 * each holding a copy parsed from its own JSON.
 *
 * Bounded (see Generations): a long-running process that keeps seeing new timestamps never grows the pool
 * without end; a value dropped from it is merely no longer shared with objects cached later.
 */
export class InternPool {
  private readonly strings: Generations<string>;
  private readonly values: Generations<unknown>;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.strings = new Generations(capacity);
    this.values = new Generations(capacity);
  }

  intern(value: string): string;
  intern(value: string | undefined): string | undefined;
  intern(value: string | undefined): string | undefined {
    return value === undefined ? undefined : this.strings.get(value, () => value);
  }

  /**
   * The one instance of a JSON value equal to `value` (compared as JSON), frozen: it is shared, so it must never
   * be changed in place. `value` itself becomes that instance when it is the first.
   */
  share<T>(value: T): T {
    if (value === undefined) return value;
    return this.values.get(JSON.stringify(value), () => deepFreeze(value)) as T;
  }
}
