import { afterEach, describe, expect, it, vi } from 'vitest';
import { serve } from '../../../src/cmd/process-lifecycle.js';
import { ConfigurationError } from '../../../src/config/environment.js';

type SignalHandler = (signal: NodeJS.Signals) => void;

/** Captures the signal handlers `serve` installs, and the exit they end in, instead of touching the process. */
function captureProcess() {
  const handlers = new Map<string, SignalHandler>();
  vi.spyOn(process, 'on').mockImplementation(((event: string, handler: SignalHandler) => {
    handlers.set(event, handler);
    return process;
  }) as typeof process.on);
  const exited = new Promise<number | undefined>((resolve) => {
    vi.spyOn(process, 'exit').mockImplementation(((code?: number) => resolve(code)) as typeof process.exit);
  });
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  return { handlers, exited };
}

afterEach(() => vi.restoreAllMocks());

describe('serve', () => {
  it('reads the configuration from the environment, starts from it, and stops on SIGTERM, exiting 0', async () => {
    const { handlers, exited } = captureProcess();
    const stop = vi.fn(async () => undefined);
    const start = vi.fn(async (config: { port: number }) => ({ stop, port: config.port }));
    await serve(
      { name: 'svc', configFromEnvironment: (env) => ({ port: Number(env.PORT) }), start },
      { PORT: '8080' },
    );
    expect(start).toHaveBeenCalledWith({ port: 8080 });
    expect([...handlers.keys()].sort()).toEqual(['SIGINT', 'SIGTERM']);
    expect(stop).not.toHaveBeenCalled();
    handlers.get('SIGTERM')?.('SIGTERM');
    expect(await exited).toBe(0);
    expect(stop).toHaveBeenCalledOnce();
  });

  it('starts nothing when the configuration is wrong: the error names the variable', async () => {
    const { handlers } = captureProcess();
    const start = vi.fn();
    const failure = serve(
      {
        name: 'svc',
        configFromEnvironment: () => {
          throw new ConfigurationError('invalid configuration: PORT: expected a number');
        },
        start,
      },
      {},
    );
    await expect(failure).rejects.toThrow(/PORT/);
    expect(start).not.toHaveBeenCalled();
    expect(handlers.size).toBe(0);
  });

  it('exits 1 when the stop fails', async () => {
    const { handlers, exited } = captureProcess();
    const stop = vi.fn(async () => {
      throw new Error('stuck');
    });
    await serve({ name: 'svc', configFromEnvironment: () => ({}), start: async () => ({ stop }) }, {});
    handlers.get('SIGINT')?.('SIGINT');
    expect(await exited).toBe(1);
  });
});
