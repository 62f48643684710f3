import { createHash } from 'node:crypto';
import type { Registry as MetricsRegistry } from 'prom-client';
import type { Logger } from '../observability/logger.js';
import { counter, gauge } from '../observability/metrics.js';

/** How often mounted credentials are read again, by default. */
export const DEFAULT_RELOAD_INTERVAL_MS = 5_000;

export interface MountedContentOptions<T> {
  /** Names the source in logs and metrics: `basic-credentials`, `jwks`. */
  source: string;
  /** The content as it is now (a file's text, or a mounted folder's entries). */
  read: () => Promise<string>;
  /** What the services use, built from the content; throws when the content is not valid, in full. */
  build: (content: string) => Promise<T>;
  intervalMs?: number;
  logger?: Logger;
  metricsRegistry?: MetricsRegistry;
  /** Stops the polling. */
  signal?: AbortSignal;
}

/**
 * A value built from a mounted Secret or ConfigMap, rebuilt when the files change. Kubernetes updates such a
 * volume by writing a new folder and swapping a `..data` symlink to it; inotify (fs.watch) on the folder does
 * not see that swap reliably on every filesystem and platform (the watched inode is the old one), so the
 * content is read again every few seconds and compared by hash, which costs a few small reads. New content is
 * built and validated in full before it replaces the value, in one assignment: content that does not build
 * keeps the previous value, logs an error, and counts in `policygrant_credentials_reload_failures_total`
 * while `policygrant_credentials_stale{source}` is 1.
 */
export class MountedContent<T> {
  private hash: string;
  private swaps = 0;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly options: MountedContentOptions<T>,
    private value: T,
    content: string,
  ) {
    this.hash = digest(content);
  }

  /** Reads and builds the value once (a failure fails the start), then keeps it current. */
  static async start<T>(options: MountedContentOptions<T>): Promise<MountedContent<T>> {
    const content = await options.read();
    const watched = new MountedContent(options, await options.build(content), content);
    watched.schedule();
    return watched;
  }

  get current(): T {
    return this.value;
  }

  /** How many times the value was replaced since the start. */
  get version(): number {
    return this.swaps;
  }

  /** Reads the content; rebuilds and swaps the value if it changed and builds. */
  async reload(): Promise<void> {
    const { source, logger } = this.options;
    const content = await this.options.read().catch((error: unknown) => ({ error }));
    if (typeof content !== 'string') return this.refuse(content.error);
    const hash = digest(content);
    if (hash === this.hash) return;
    try {
      this.value = await this.options.build(content);
      this.hash = hash;
      this.swaps += 1;
      this.metrics()?.stale.set({ source }, 0);
      logger?.info({ source }, 'credentials reloaded');
    } catch (error) {
      this.refuse(error);
    }
  }

  private refuse(error: unknown): void {
    const { source, logger } = this.options;
    const metrics = this.metrics();
    metrics?.failures.inc({ source });
    metrics?.stale.set({ source }, 1);
    logger?.error({ source, err: error }, 'credentials not reloaded: the previous ones stay in use');
  }

  private schedule(): void {
    const { signal } = this.options;
    if (signal?.aborted) return;
    this.timer = setTimeout(
      () => void this.reload().finally(() => this.schedule()),
      this.options.intervalMs ?? DEFAULT_RELOAD_INTERVAL_MS,
    );
    // Never what keeps a process alive: the servers do that.
    this.timer.unref();
    signal?.addEventListener('abort', () => clearTimeout(this.timer), { once: true });
  }

  private metrics() {
    const registry = this.options.metricsRegistry;
    if (!registry) return undefined;
    return {
      failures: counter(registry, {
        name: 'credentials_reload_failures_total',
        help: 'Reloads of mounted credentials refused (unreadable or invalid content); the previous ones stay.',
        labelNames: ['source'],
      }),
      stale: gauge(registry, {
        name: 'credentials_stale',
        help: '1 while the mounted credentials of a source are refused and the previous ones are in use.',
        labelNames: ['source'],
      }),
    };
  }
}

function digest(content: string): string {
  return createHash('sha256').update(content).digest('hex');
}
