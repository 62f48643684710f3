import { Agent, request } from 'node:http';
import type { IncomingHttpHeaders, RequestListener } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Drain } from '../../../src/http/drain.js';
import { listen } from '../../../src/http/server.js';
import type { RunningServer } from '../../../src/http/server.js';
import { sampleApp } from './support/sample-api.js';
import { capturedLogger } from './support/serve.js';

/** A delay the test ends by hand: the drain's wait. */
function heldDelay() {
  let end: () => void = () => undefined;
  const asked: number[] = [];
  const wait = (ms: number) => {
    asked.push(ms);
    return new Promise<void>((resolve) => (end = resolve));
  };
  return { wait, asked, end: () => end() };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

const agents: Agent[] = [];
afterEach(() => agents.splice(0).forEach((agent) => agent.destroy()));

function keepAliveAgent(): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(agent);
  return agent;
}

function get(url: string, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { agent }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
      );
    });
    outgoing.on('error', reject).end();
  });
}

describe('Drain', () => {
  it('fails readiness first, waits its delay, and only then closes', async () => {
    const held = heldDelay();
    const drain = new Drain(5_000, held.wait);
    const steps: string[] = [];

    expect(drain.draining).toBe(false);
    const done = drain.run(async () => {
      steps.push('close');
    });
    expect(drain.draining).toBe(true);
    expect(held.asked).toEqual([5_000]);
    expect(steps).toEqual([]);
    held.end();
    await done;
    expect(steps).toEqual(['close']);
  });
});

describe('a draining server', () => {
  const slowPath = '/slow';
  let finishSlow: () => void = () => undefined;
  let slowArrived: () => void = () => undefined;
  const slowApp = (app: RequestListener): RequestListener => {
    return (incoming, outgoing) => {
      if (incoming.url !== slowPath) return app(incoming, outgoing);
      slowArrived();
      void new Promise<void>((resolve) => (finishSlow = resolve)).then(() => outgoing.end('slow done'));
    };
  };

  async function start(): Promise<{ server: RunningServer; held: ReturnType<typeof heldDelay> }> {
    const held = heldDelay();
    const drain = new Drain(5_000, held.wait);
    const { app } = sampleApp({ logger: capturedLogger().logger, readinessChecks: [], drain });
    const server = await listen(slowApp(app), { port: 0, host: '127.0.0.1', closeGraceMs: 60_000, drain });
    return { server, held };
  }

  it('answers 503 on readiness at once, keeps serving with Connection: close, then refuses new connections', async () => {
    const { server, held } = await start();
    const client = keepAliveAgent();
    const before = await get(`${server.url}/healthz/ready`, client);
    expect(before.status).toBe(200);
    expect(before.headers.connection).toBe('keep-alive');

    const closed = server.close();
    const ready = await get(`${server.url}/healthz/ready`, client);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body).detail).toBe('not ready: shutting down');
    expect(ready.headers.connection).toBe('close');
    const live = await get(`${server.url}/healthz/live`, keepAliveAgent());
    expect(live.status).toBe(200);
    expect(live.headers.connection).toBe('close');

    held.end();
    await closed;
    await expect(get(`${server.url}/healthz/live`, keepAliveAgent())).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });

  it('lets a request in flight when the listener closes finish', async () => {
    const { server, held } = await start();
    const arrived = new Promise<void>((resolve) => (slowArrived = resolve));
    const slow = get(`${server.url}${slowPath}`, keepAliveAgent());
    await arrived;
    const closed = server.close();
    held.end();
    let serverClosed = false;
    void closed.then(() => (serverClosed = true));
    await expect
      .poll(() => get(`${server.url}/healthz/live`, keepAliveAgent()).catch((error) => error.code))
      .toBe('ECONNREFUSED');
    expect(serverClosed).toBe(false);
    finishSlow();
    expect(await slow).toMatchObject({ status: 200, body: 'slow done', headers: { connection: 'close' } });
    await closed;
  });
});
