import { isIP } from 'node:net';
import type { TrustedProxies } from '../http/client-address.js';

const EXAMPLE = 'e.g. 10.0.0.5, 10.1.0.0/16';

/**
 * `TRUST_PROXY`: a comma-separated list of the proxies' addresses and subnets, express's `trust proxy` list.
 * Only named addresses are believed: a hop count (`1`) makes express believe whatever connects, so any pod
 * that reaches the port chooses its client address (locks another address out, or rotates the header to
 * dodge the limit of failed authentications); it is refused, as are `true` and a subnet of every address.
 */
export function parseTrustedProxies(text: string): TrustedProxies {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (/^\d+$/.test(text.trim())) {
    throw new Error(
      `a hop count (${text.trim()}) lets whoever connects name any client address; name the proxies' addresses or subnets instead, ${EXAMPLE}`,
    );
  }
  if (entries.length === 0) throw new Error(`expected the proxies' addresses or subnets, ${EXAMPLE}`);
  for (const entry of entries) checkEntry(entry);
  return entries;
}

function checkEntry(entry: string): void {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  const bits = family === 6 ? 128 : 32;
  const prefixLength = Number(prefix);
  const validPrefix =
    prefix === undefined || (/^\d+$/.test(prefix) && prefixLength >= 1 && prefixLength <= bits);
  if (family === 0 || rest.length > 0 || !validPrefix) {
    throw new Error(
      `"${entry}" is not an IP address or a subnet (address/prefix, the prefix from 1 to ${bits}), ${EXAMPLE}`,
    );
  }
}
