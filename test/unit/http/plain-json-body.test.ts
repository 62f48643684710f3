import { Readable } from 'node:stream';
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/http/errors.js';
import { byteCount } from '../../../src/http/json-body.js';
import { isPlainJsonBody, readPlainJsonBody } from '../../../src/http/plain-json-body.js';

function request(headers: Record<string, string>, chunks: Buffer[] = []): Request {
  return Object.assign(Readable.from(chunks), { headers }) as unknown as Request;
}

function read(req: Request): Promise<{ error: unknown; body: unknown }> {
  return new Promise((resolve) => readPlainJsonBody(req, (error) => resolve({ error, body: req.body })));
}

const plain = { 'content-type': 'application/json', 'content-length': '2' };

describe('isPlainJsonBody: the bodies read without body-parser', () => {
  it.each([
    ['application/json', plain],
    ['UTF-8 named', { ...plain, 'content-type': 'application/json; charset=utf-8' }],
    ['UTF-8 quoted', { ...plain, 'content-type': 'Application/JSON;charset="UTF-8"' }],
    ['identity encoded', { ...plain, 'content-encoding': 'identity' }],
    ['at the limit', { ...plain, 'content-length': '64' }],
  ])('reads %s', (_case, headers) => {
    expect(isPlainJsonBody(request(headers), 64)).toBe(true);
  });

  it.each([
    ['another media type', { ...plain, 'content-type': 'text/plain' }],
    ['a +json media type', { ...plain, 'content-type': 'application/merge-patch+json' }],
    ['another charset', { ...plain, 'content-type': 'application/json; charset=latin1' }],
    ['no media type', { 'content-length': '2' }],
    ['a compressed body', { ...plain, 'content-encoding': 'gzip' }],
    ['a chunked body', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }],
    ['an empty body', { ...plain, 'content-length': '0' }],
    ['a body over the limit', { ...plain, 'content-length': '65' }],
  ])('leaves %s to body-parser', (_case, headers) => {
    expect(isPlainJsonBody(request(headers), 64)).toBe(false);
  });
});

describe('readPlainJsonBody', () => {
  it('parses a body that came in several chunks, a character split between them', async () => {
    const bytes = Buffer.from('{"name":"Zoë"}');
    const split = bytes.indexOf(0xc3) + 1;
    const outcome = await read(request(plain, [bytes.subarray(0, split), bytes.subarray(split)]));
    expect(outcome).toEqual({ error: undefined, body: { name: 'Zoë' } });
  });

  it('drops a byte order mark, as body-parser does', async () => {
    const outcome = await read(request(plain, [Buffer.from('\ufeff [1]')]));
    expect(outcome).toEqual({ error: undefined, body: [1] });
  });

  it.each([
    ['malformed JSON', '{"name": '],
    ['a string (strict: objects and arrays only)', '"name"'],
    ['whitespace only', ' \n'],
  ])('answers %s with the 400 body-parser gives', async (_case, text) => {
    const { error } = await read(request(plain, [Buffer.from(text)]));
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 400, detail: 'request body is not valid JSON' });
  });

  it('answers a request the client aborted with a 400', async () => {
    const req = request(plain);
    const outcome = read(req);
    (req as unknown as Readable).destroy(new Error('aborted'));
    expect((await outcome).error).toMatchObject({ status: 400, detail: 'request aborted' });
  });
});

describe('byteCount', () => {
  it('reads limits as body-parser does, in units of 1024', () => {
    expect([byteCount('32kb'), byteCount('1mb'), byteCount('512 B'), byteCount(100)]).toEqual([
      32_768, 1_048_576, 512, 100,
    ]);
    expect(() => byteCount('lots')).toThrow('not a byte count');
  });
});
