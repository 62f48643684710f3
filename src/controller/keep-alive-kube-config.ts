import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * A KubeConfig whose requests share one keep-alive connection pool. KubeConfig.applyToHTTPSOptions builds a
 * new https.Agent for every request, so each request would pay a TCP and TLS handshake (tens of milliseconds
 * on a busy machine, three times per grant). The TLS material of the first agent is reused, the per-request
 * part (the Authorization header of a refreshed token) still comes from KubeConfig every time.
 */
export class KeepAliveKubeConfig extends KubeConfig {
  private agent?: https.Agent;

  override async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    await super.applyToHTTPSOptions(options);
    if (!(options.agent instanceof https.Agent)) return; // a proxy agent: leave it alone
    this.agent ??= new https.Agent({ ...options.agent.options, keepAlive: true });
    options.agent = this.agent;
  }

  /** Closes the pooled connections. */
  close(): void {
    this.agent?.destroy();
  }
}
