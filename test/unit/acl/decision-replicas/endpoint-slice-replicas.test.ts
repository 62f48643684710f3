import { describe, expect, it } from 'vitest';
import { readyEndpoints } from '../../../../src/acl/decision-replicas/endpoint-slice-replicas.js';
import type { EndpointSlice } from '../../../../src/acl/decision-replicas/endpoint-slice-replicas.js';

function slice(addressType: string, endpoints: EndpointSlice['endpoints'], port = 8081): EndpointSlice {
  return {
    metadata: { name: `decision-${addressType}` },
    addressType,
    ports: [
      { name: 'metrics', port: 9090 },
      { name: 'http', port },
    ],
    endpoints,
  };
}

describe('the decision Service’s Ready endpoints', () => {
  it('one URL per Ready address on the named port; no condition counts as Ready, a terminating one does not', () => {
    expect(
      readyEndpoints(
        [
          slice('IPv4', [
            { addresses: ['10.0.0.2'], conditions: { ready: true } },
            { addresses: ['10.0.0.3'], conditions: {} },
            { addresses: ['10.0.0.4'], conditions: { ready: false } },
            { addresses: [] },
          ]),
          slice('IPv6', [{ addresses: ['fd00::5'], conditions: { ready: true } }]),
        ],
        'http',
      ),
    ).toEqual(['http://10.0.0.2:8081', 'http://10.0.0.3:8081', 'http://[fd00::5]:8081']);
  });

  it('nothing from a slice without the named port, or without endpoints', () => {
    expect(readyEndpoints([slice('IPv4', [{ addresses: ['10.0.0.2'] }])], 'grpc')).toEqual([]);
    expect(readyEndpoints([slice('IPv4', null)], 'http')).toEqual([]);
  });
});
