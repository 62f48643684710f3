import { ipKeyGenerator } from 'express-rate-limit';
import type { Request } from 'express';

/** The proxies trusted to name the client address in X-Forwarded-For: addresses and subnets (CIDR). */
export type TrustedProxies = readonly string[];

/** IPv6 clients are counted by /56, the smallest prefix an ISP commonly hands out. */
const IPV6_SUBNET = 56;

/**
 * The client address a request's authentication attempts count against: the peer, or the address a trusted
 * proxy names (express's `req.ip` under `trust proxy`), IPv6 by its /56.
 */
export function clientAddress(req: Request): string {
  return ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown', IPV6_SUBNET);
}
