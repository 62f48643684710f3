import { Writable } from 'node:stream';
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, RequestListener } from 'node:http';
import { afterEach } from 'vitest';
import { listen } from '../../../../src/http/server.js';
import { createLogger } from '../../../../src/observability/logger.js';
import type { Logger } from '../../../../src/observability/logger.js';
import { until } from '../../../../dev/wait/until.js';

const running: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((close) => close()));
});

/** Serves `app` on a free loopback port until the end of the test; returns its base URL. */
export async function serve(app: RequestListener): Promise<string> {
  const server = await listen(app, { port: 0, host: '127.0.0.1', closeGraceMs: 100 });
  running.push(() => server.close());
  return server.url;
}

export interface CapturedLogs {
  logger: Logger;
  lines(): Array<Record<string, unknown>>;
  text(): string;
  /** The first line with message `msg`, once written: a response can reach the client before its log line. */
  line(msg: string): Promise<Record<string, unknown>>;
}

/** A debug-level logger whose JSON lines the test can read. */
export function capturedLogger(): CapturedLogs {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ level: 'debug', destination });
  const text = () => chunks.join('');
  const lines = () =>
    text()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const find = (msg: string) => lines().find((line) => line.msg === msg);
  return {
    logger,
    text,
    lines,
    async line(msg) {
      await until(() => find(msg) !== undefined, `a log line "${msg}"`);
      return find(msg) as Record<string, unknown>;
    },
  };
}

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A request through node's own client, which sends header values byte for byte (latin1) and any Host; a body is
 * sent as bytes, since node writes a string body in one write with the header block, in the body's encoding.
 */
export function send(
  url: string,
  options: { method?: string; headers: Record<string, string>; body?: unknown },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }),
        );
      },
    );
    request.on('error', reject);
    request.end(options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body)));
  });
}
