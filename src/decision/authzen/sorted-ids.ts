/** Separates the ids in SortedIds' text: SpiceDB object ids never hold it (`[a-zA-Z0-9/_|\-=+]`). */
const SEPARATOR = '\n';

/**
 * A search's answer in code-unit order, held compactly for the pages that continue it: one string of every id
 * and the offset where each starts (a few bytes per id beyond the id itself, where an array of strings costs
 * tens). A page is found by binary search and copied out: its time and memory depend on the page, not on the
 * answer.
 */
export class SortedIds {
  private readonly text: string;
  /** Where each id starts in `text`, and one past the end of the last. */
  private readonly starts: Uint32Array;

  constructor(ids: readonly string[]) {
    const sorted = inCodeUnitOrder(ids);
    this.text = sorted.join(SEPARATOR);
    this.starts = new Uint32Array(sorted.length + 1);
    let offset = 0;
    sorted.forEach((id, index) => {
      this.starts[index] = offset;
      offset += id.length + SEPARATOR.length;
    });
    this.starts[sorted.length] = offset;
  }

  get count(): number {
    return this.starts.length - 1;
  }

  /** What holding the answer costs, in bytes (UTF-16 at worst for the text). */
  get bytes(): number {
    return this.text.length * 2 + this.starts.byteLength;
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
    return this.text.slice(this.starts[index], (this.starts[index + 1] as number) - SEPARATOR.length);
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
