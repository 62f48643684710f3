import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';

export interface AnswerFromAddress {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * An HTTP request from a chosen local address, e.g. `127.0.0.2`: all of 127/8 is loopback on Linux, so a test
 * can be a second client address to a server on 127.0.0.1.
 */
export function requestFromAddress(
  localAddress: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<AnswerFromAddress> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, {
      method: options.method ?? 'GET',
      headers: options.headers,
      localAddress,
    });
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}
