import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { handlerChain } from '../../../src/http/handler-chain.js';

const req = {} as Request;
const res = {} as Response;

/** Runs `handlers` and resolves with what reached the chain's next, and which handlers ran. */
function run(handlers: (ran: string[]) => RequestHandler[]): Promise<{ passed: unknown[]; ran: string[] }> {
  const ran: string[] = [];
  return new Promise((resolve) => {
    const next: NextFunction = (...passed: unknown[]) => resolve({ passed, ran });
    handlerChain(handlers(ran))(req, res, next);
  });
}

describe('handlerChain', () => {
  it('runs the handlers in order, async ones included, then calls next without an error', async () => {
    const outcome = await run((ran) => [
      (_req, _res, next) => (ran.push('first'), next()),
      async (_req, _res, next) => {
        await Promise.resolve();
        ran.push('second');
        next();
      },
      (_req, _res, next) => (ran.push('third'), next()),
    ]);
    expect(outcome).toEqual({ passed: [], ran: ['first', 'second', 'third'] });
  });

  it.each([
    [
      'passed to next',
      (error: Error): RequestHandler =>
        (_req, _res, next) =>
          next(error),
    ],
    [
      'thrown',
      (error: Error): RequestHandler =>
        () => {
          throw error;
        },
    ],
    [
      'rejected',
      (error: Error): RequestHandler =>
        async () =>
          Promise.reject(error),
    ],
  ])('stops at an error %s and hands it to next', async (_how, failing) => {
    const error = new Error('broken');
    const outcome = await run((ran) => [failing(error), () => ran.push('after')]);
    expect(outcome).toEqual({ passed: [error], ran: [] });
  });

  it('stops where a handler answers without calling next', async () => {
    const ran: string[] = [];
    const next = () => ran.push('next');
    handlerChain([() => ran.push('answers'), () => ran.push('after')])(req, res, next);
    await Promise.resolve();
    expect(ran).toEqual(['answers']);
  });
});
