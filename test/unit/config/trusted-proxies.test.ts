import { describe, expect, it } from 'vitest';
import { parseTrustedProxies } from '../../../src/config/trusted-proxies.js';

describe('parseTrustedProxies', () => {
  it('reads addresses and subnets, IPv4 and IPv6, comma-separated', () => {
    expect(parseTrustedProxies(' 10.0.0.5, 10.1.0.0/16,fd00::/8, ::1 ')).toEqual([
      '10.0.0.5',
      '10.1.0.0/16',
      'fd00::/8',
      '::1',
    ]);
  });

  it('refuses a hop count, naming what to give instead', () => {
    expect(() => parseTrustedProxies('1')).toThrow(
      /a hop count \(1\) lets whoever connects name any client address; name the proxies' addresses or subnets/,
    );
  });

  it.each([
    ['true', 'true'],
    ['loopback', 'loopback'],
    ['10.0.0.0/0', '10.0.0.0/0'],
    ['10.0.0.0/33', '10.0.0.0/33'],
    ['10.0.0.1, gateway', 'gateway'],
    ['10.0.0.0/8/1', '10.0.0.0/8/1'],
  ])('refuses %s, naming the entry', (text, entry) => {
    expect(() => parseTrustedProxies(text)).toThrow(`"${entry}" is not an IP address or a subnet`);
  });

  it('refuses a list without an entry', () => {
    expect(() => parseTrustedProxies(' , ')).toThrow(/expected the proxies' addresses or subnets/);
  });
});
