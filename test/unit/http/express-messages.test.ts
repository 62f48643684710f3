import { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestListener } from 'node:http';
import express from 'express';
import { describe, expect, it } from 'vitest';
import type { ExpressPrototypes } from '../../../src/http/express-messages.js';
import { serve } from './support/serve.js';

interface Seen {
  requestBornWithApps: boolean;
  responseBornWithApps: boolean;
  nodeRequest: boolean;
  nodeResponse: boolean;
}

/** A listener shaped like an express app that reports what the server handed it, before anything changed it. */
function recordingApp(seen: Seen[]): RequestListener & ExpressPrototypes {
  const prototypes = {
    request: Object.create(IncomingMessage.prototype) as object,
    response: Object.create(ServerResponse.prototype) as object,
  };
  const listener: RequestListener = (req, res) => {
    seen.push({
      requestBornWithApps: Object.getPrototypeOf(req) === prototypes.request,
      responseBornWithApps: Object.getPrototypeOf(res) === prototypes.response,
      nodeRequest: req instanceof IncomingMessage,
      nodeResponse: res instanceof ServerResponse,
    });
    res.end('ok');
  };
  return Object.assign(listener, prototypes);
}

describe('listen with an express app', () => {
  it("hands the app requests and responses born with its prototypes, still node's", async () => {
    const seen: Seen[] = [];
    const url = await serve(recordingApp(seen));
    const answer = await fetch(`${url}/anything`);
    expect(await answer.text()).toBe('ok');
    expect(seen).toEqual([
      { requestBornWithApps: true, responseBornWithApps: true, nodeRequest: true, nodeResponse: true },
    ]);
  });

  it('serves an express app whose handlers use express and node request and response features', async () => {
    const app = express();
    app.post('/echo', express.json(), (req, res) => {
      res
        .status(201)
        .set('x-seen', req.get('x-probe') ?? '')
        .json({ body: req.body as unknown, path: req.path });
    });
    const url = await serve(app);
    const answer = await fetch(`${url}/echo?q=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-probe': 'yes' },
      body: JSON.stringify({ a: 1 }),
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('x-seen')).toBe('yes');
    expect(await answer.json()).toEqual({ body: { a: 1 }, path: '/echo' });
  });
});
