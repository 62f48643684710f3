import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { SpiceDBClientOptions } from '../spicedb/client.js';
import { ConfigurationError } from './environment.js';

export const spicedbEnvironment = z.object({
  SPICEDB_ENDPOINT: z.string().regex(/^[^\s:]+:\d+$/, 'host:port of the SpiceDB gRPC API'),
  SPICEDB_TOKEN: z.string().min(1, 'the SpiceDB preshared key'),
  /** plaintext only on loopback or inside a trusted mesh. */
  SPICEDB_TLS: z.enum(['plaintext', 'tls']).default('tls'),
  /** A CA bundle to trust for SpiceDB's TLS certificate, instead of the system roots. */
  SPICEDB_CA_FILE: z.string().optional(),
});

export type SpiceDBEnvironment = z.output<typeof spicedbEnvironment>;

/** Where SpiceDB is and how to reach it, as the environment says (the decision service's and the controller's). */
export interface SpiceDBSettings {
  /** host:port of SpiceDB's gRPC API. */
  endpoint: string;
  token: string;
  /** plaintext (loopback or a trusted mesh only), TLS with the system roots, or TLS trusting a CA file. */
  transport: 'plaintext' | 'tls' | { caFile: string };
}

/** The SpiceDB settings; a CA file with SPICEDB_TLS=plaintext is refused, as it would be ignored. */
export function spicedbSettings(env: SpiceDBEnvironment): SpiceDBSettings {
  if (env.SPICEDB_CA_FILE && env.SPICEDB_TLS === 'plaintext') {
    throw new ConfigurationError('SPICEDB_CA_FILE: a CA file needs SPICEDB_TLS=tls, not plaintext');
  }
  return {
    endpoint: env.SPICEDB_ENDPOINT,
    token: env.SPICEDB_TOKEN,
    transport: env.SPICEDB_CA_FILE ? { caFile: env.SPICEDB_CA_FILE } : env.SPICEDB_TLS,
  };
}

/** The client's options for `settings`: reads the CA file a TLS transport trusts. */
export function spicedbClientOptions({ endpoint, token, transport }: SpiceDBSettings): SpiceDBClientOptions {
  return {
    endpoint,
    token,
    transport: typeof transport === 'string' ? transport : { caCertificate: readFileSync(transport.caFile) },
  };
}
