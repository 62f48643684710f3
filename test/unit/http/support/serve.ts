import { Writable } from 'node:stream';
import type { RequestListener } from 'node:http';
import { afterEach } from 'vitest';
import { listen } from '../../../../src/http/server.js';
import { createLogger } from '../../../../src/observability/logger.js';
import type { Logger } from '../../../../src/observability/logger.js';
import { until } from '../../../support/until.js';

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
