import type { Relationship } from '../../spicedb/client.js';
import { tupleKey, type TupleKey } from '../../verdict/tuple-key.js';

/** What this process last wrote to SpiceDB for one object. */
export interface LastWrite {
  /** Identifies the write: the tuples with their expirations, or the withdrawal of a set of candidates. */
  fingerprint: string;
  /** Tuples written for the object and not deleted since; empty after a withdrawal. */
  keys: TupleKey[];
  zedToken: string | undefined;
}

export function enforcedFingerprint(relationships: readonly Relationship[]): string {
  return relationships
    .map((relationship) => `${tupleKey(relationship)} ${relationship.expiresAt?.getTime() ?? ''}`)
    .sort()
    .join('\n');
}

export function withdrawnFingerprint(candidates: readonly TupleKey[]): string {
  return ['withdrawn', ...[...candidates].sort()].join('\n');
}

/**
 * Per object of one kind (by `namespace/name`), what the controller last wrote: lets a reconcile skip a write
 * that would change nothing, and tells it which tuples an edited object no longer projects. Process-local: it
 * starts empty (every object is written once after a start, unless its status is believed) and is cleared
 * whenever SpiceDB may have lost or changed tuples behind the controller's back (outage, new term of
 * leadership); the resync repairs the rest.
 */
export class LastWrites {
  private readonly records = new Map<string, LastWrite>();

  get(key: string): LastWrite | undefined {
    return this.records.get(key);
  }

  set(key: string, record: LastWrite): void {
    this.records.set(key, record);
  }

  forget(key: string): void {
    this.records.delete(key);
  }

  clear(): void {
    this.records.clear();
  }

  get size(): number {
    return this.records.size;
  }
}
