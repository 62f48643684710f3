import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { SpiceDBClientOptions } from '../spicedb/client.js';

export const spicedbEnvironment = z.object({
  SPICEDB_ENDPOINT: z.string().regex(/^[^\s:]+:\d+$/, 'host:port of the SpiceDB gRPC API'),
  SPICEDB_TOKEN: z.string().min(1, 'the SpiceDB preshared key'),
  /** plaintext only on loopback or inside a trusted mesh. */
  SPICEDB_TLS: z.enum(['plaintext', 'tls']).default('tls'),
  /** A CA bundle to trust for SpiceDB's TLS certificate, instead of the system roots. */
  SPICEDB_CA_FILE: z.string().optional(),
});

export type SpiceDBEnvironment = z.output<typeof spicedbEnvironment>;

export function spicedbClientOptions(env: SpiceDBEnvironment): SpiceDBClientOptions {
  const transport =
    env.SPICEDB_TLS === 'plaintext'
      ? 'plaintext'
      : env.SPICEDB_CA_FILE
        ? { caCertificate: readFileSync(env.SPICEDB_CA_FILE) }
        : 'tls';
  return { endpoint: env.SPICEDB_ENDPOINT, token: env.SPICEDB_TOKEN, transport };
}
