import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How a replica behind a Service leaves it without losing a request. Endpoints controllers remove a replica
 * from rotation only once its readiness fails, and kube-proxies learn it a moment later: a server that stopped
 * accepting at SIGTERM would refuse the connections still routed to it. So readiness fails at once, the
 * listener keeps serving for `delayMs` (answering `Connection: close`, so that keep-alive clients reconnect
 * through the Service to another replica), and only then does the server stop accepting.
 */
export class Drain {
  #draining = false;

  constructor(
    readonly delayMs = 0,
    private readonly wait: (ms: number) => Promise<unknown> = sleep,
  ) {}

  /** True from the moment the drain begins: readiness answers 503 at once, without running its checks. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Readiness fails now; `close` (stop accepting, finish in-flight requests) runs once the delay is over. */
  async run(close: () => Promise<void>): Promise<void> {
    this.#draining = true;
    await this.wait(this.delayMs);
    await close();
  }
}
