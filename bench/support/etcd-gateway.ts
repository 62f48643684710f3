import pLimit from 'p-limit';

// etcd's JSON gRPC gateway (v3 API over HTTP, keys and values base64), through fetch: what a benchmark needs to
// write objects straight into etcd and read etcd's own size figures.

/** etcd's default --max-txn-ops: the most operations one transaction may hold. */
const MAX_TXN_OPS = 128;
const TXNS_IN_FLIGHT = 4;
const REQUEST_TIMEOUT_MS = 60_000;

export interface EtcdEntry {
  key: string;
  value: string;
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

export class EtcdGateway {
  constructor(private readonly clientUrl: string) {}

  private async post<T>(path: string, body: object): Promise<T> {
    const response = await fetch(`${this.clientUrl}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  /** Puts every entry, in transactions of at most MAX_TXN_OPS, a few in flight. */
  async putAll(entries: EtcdEntry[]): Promise<void> {
    const starts = Array.from({ length: Math.ceil(entries.length / MAX_TXN_OPS) }, (_, i) => i * MAX_TXN_OPS);
    await pLimit(TXNS_IN_FLIGHT).map(starts, async (start) => {
      const success = entries.slice(start, start + MAX_TXN_OPS).map(({ key, value }) => ({
        requestPut: { key: base64(key), value: base64(value) },
      }));
      await this.post('/v3/kv/txn', { success });
    });
  }

  /** The value stored under `key`, or undefined. */
  async get(key: string): Promise<string | undefined> {
    const { kvs } = await this.post<{ kvs?: { value: string }[] }>('/v3/kv/range', { key: base64(key) });
    const value = kvs?.[0]?.value;
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  }

  /** etcd_mvcc_db_total_size_in_use_in_bytes: the bytes of etcd's database file that hold data. */
  async dbSizeInUse(): Promise<number> {
    const response = await fetch(`${this.clientUrl}/metrics`, {
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const line = /^etcd_mvcc_db_total_size_in_use_in_bytes (\S+)$/m.exec(await response.text());
    if (!line?.[1]) throw new Error('etcd /metrics has no etcd_mvcc_db_total_size_in_use_in_bytes');
    return Number(line[1]);
  }
}
