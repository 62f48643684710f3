import { z } from 'zod';
import type { SpiceDBSettings } from '../spicedb/spicedb-settings.js';
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
