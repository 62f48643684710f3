/** Separates the ids in SortedIds' text: SpiceDB object ids never hold it (`[a-zA-Z0-9/_|\-=+]`). */
const SEPARATOR = '\n';

/** An answer held compactly: one string of every id, and where each starts (and one past the end of the last). */
interface Compact {
  text: string;
  starts: Uint32Array;
}

/**
 * A search's answer in code-unit order, paged by binary search: a page's time and memory depend on the page, not
 * on the answer. An answer kept for later pages is compacted first (`compact`): one string of every id and the
 * offset where each starts, a few bytes per id beyond the id itself, where an array of strings costs tens. An
 * answer of one page is never compacted: joining it would only cost.
 */
export class SortedIds {
  private ids: readonly string[] | Compact;
  readonly count: number;

  constructor(ids: readonly string[]) {
    this.ids = inCodeUnitOrder(ids);
    this.count = ids.length;
  }

  /** Holds the ids compactly from now on; returns this. */
  compact(): this {
    const ids = this.ids;
    if (!Array.isArray(ids)) return this;
    const starts = new Uint32Array(this.count + 1);
    let offset = 0;
    ids.forEach((id: string, index: number) => {
      starts[index] = offset;
      offset += id.length + SEPARATOR.length;
    });
    starts[this.count] = offset;
    this.ids = { text: ids.join(SEPARATOR), starts };
    return this;
  }

  /** What holding the answer compactly costs, in bytes (UTF-16 at worst for the text). */
  get bytes(): number {
    const { text, starts } = this.compact().ids as Compact;
    return text.length * 2 + starts.byteLength;
  }

  /** The ids after `after` (all when undefined), at most `limit` of them; `more` when some remain. */
  pageAfter(
    after: string | undefined,
    limit: number,
  ): { items: string[]; last: string | undefined; more: boolean } {
    const start = after === undefined ? 0 : this.firstAbove(after);
    const end = Math.min(start + limit, this.count);
    const items: string[] = [];
    for (let index = start; index < end; index++) items.push(this.at(index));
    return { items, last: items.at(-1), more: end < this.count };
  }

  private at(index: number): string {
    const ids = this.ids;
    if (Array.isArray(ids)) return ids[index] as string;
    const { text, starts } = ids as Compact;
    return text.slice(starts[index], (starts[index + 1] as number) - SEPARATOR.length);
  }

  /** The index of the first id greater than `after`. */
  private firstAbove(after: string): number {
    let [low, high] = [0, this.count];
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.at(middle) > after) high = middle;
      else low = middle + 1;
    }
    return low;
  }
}

/** The ids in code-unit order: a deterministic order in which a page continues after its last id. */
export function inCodeUnitOrder(ids: readonly string[]): string[] {
  // Without a compare function, sort orders strings by code units, and runs no JavaScript per comparison.
  return [...ids].sort();
}
