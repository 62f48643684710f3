import express from 'express';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { accessLog } from '../../../src/http/access-log.js';
import { requestContext } from '../../../src/http/request-context.js';
import { capturedLogger, serve } from './support/serve.js';

async function logLevelOf(path: string, status: number): Promise<string | undefined> {
  const logs = capturedLogger();
  const app = express();
  app.use(requestContext(logs.logger));
  app.use(accessLog({ quietPaths: new Set(['/healthz/ready']), hotPaths: new Set(['/v1/check']) }));
  app.use((_req, res) => void res.status(status).json({}));
  await fetch(`${await serve(app)}${path}`);
  return (await logs.line('request')).level as string | undefined;
}

const [DEBUG, INFO, ERROR] = ['debug', 'info', 'error'];

describe('access log levels', () => {
  it('logs ordinary requests at info and server errors at error', async () => {
    expect(await logLevelOf('/v2/policy', 200)).toBe(INFO);
    expect(await logLevelOf('/v2/policy', 503)).toBe(ERROR);
  });

  it('keeps operational paths at debug whatever their status', async () => {
    expect(await logLevelOf('/healthz/ready', 503)).toBe(DEBUG);
  });

  it('logs hot paths at debug, but their server errors at error', async () => {
    expect(await logLevelOf('/v1/check', 200)).toBe(DEBUG);
    expect(await logLevelOf('/v1/check', 503)).toBe(ERROR);
  });

  it('makes no request logger for a line below the logger’s level, and one per request that logs', async () => {
    const logger = pino({ level: 'info' }, { write: () => undefined });
    const child = vi.spyOn(logger, 'child');
    const app = express();
    app.use(requestContext(logger));
    app.use(accessLog({ hotPaths: new Set(['/v1/check']), logger }));
    app.use((req, res) => {
      if (req.path === '/twice') [req.log, req.log].forEach((log) => log.info('in the handler'));
      res.status(200).json({});
    });
    const url = await serve(app);
    await fetch(`${url}/v1/check`);
    expect(child).not.toHaveBeenCalled();
    await fetch(`${url}/twice`);
    await vi.waitFor(() => expect(child).toHaveBeenCalledTimes(1));
  });
});
