import { readFileSync } from 'node:fs';
import type { SpiceDBClientOptions } from './client.js';

/** Where SpiceDB is and how to reach it, as data (the decision service's and the controller's `spicedb` setting). */
export interface SpiceDBSettings {
  /** host:port of SpiceDB's gRPC API. */
  endpoint: string;
  token: string;
  /** plaintext (loopback or a trusted mesh only), TLS with the system roots, or TLS trusting a CA file. */
  transport: 'plaintext' | 'tls' | { caFile: string };
}

/** The client's options for `settings`: reads the CA file a TLS transport trusts. */
export function spicedbClientOptions({ endpoint, token, transport }: SpiceDBSettings): SpiceDBClientOptions {
  return {
    endpoint,
    token,
    transport: typeof transport === 'string' ? transport : { caCertificate: readFileSync(transport.caFile) },
  };
}
