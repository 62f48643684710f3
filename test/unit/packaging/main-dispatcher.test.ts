import { describe, expect, it, vi } from 'vitest';
import { runService, COMMANDS, USAGE, type Service } from '../../../src/cmd/main.js';

function recordingLoader(entrypoint: { main?: (argv: string[]) => unknown } = {}) {
  const loaded: Service[] = [];
  const load = async (service: Service) => (loaded.push(service), entrypoint);
  return { loaded, load };
}

describe('the image entrypoint (src/cmd/main.ts)', () => {
  it.each(COMMANDS)(
    'loads the %s module and calls its main with the remaining arguments',
    async (service) => {
      const main = vi.fn();
      const { loaded, load } = recordingLoader({ main });
      await expect(runService([service, '--flag', 'value'], load)).resolves.toBeUndefined();
      expect(loaded).toEqual([service]);
      expect(main).toHaveBeenCalledWith(['--flag', 'value']);
    },
  );

  it('fails loudly when the module exports no main, instead of leaving an idle container', async () => {
    const { load } = recordingLoader();
    await expect(runService(['controller'], load)).rejects.toThrow(
      'src/cmd/controller.ts does not export a main',
    );
  });

  it('waits for main, so a failing start fails the process', async () => {
    const { load } = recordingLoader({ main: () => Promise.reject(new Error('SPICEDB_ENDPOINT: Required')) });
    await expect(runService(['acl-api'], load)).rejects.toThrow('SPICEDB_ENDPOINT');
  });

  it.each([
    { argv: [], message: 'no service named' },
    { argv: ['dev-stack'], message: 'unknown service "dev-stack"' },
    { argv: ['../auth/dev-token-cli'], message: 'unknown service "../auth/dev-token-cli"' },
  ])('answers 2 with the usage for $argv, loading nothing', async ({ argv, message }) => {
    const { loaded, load } = recordingLoader();
    const errors: string[] = [];
    await expect(runService(argv, load, (text) => errors.push(text))).resolves.toBe(2);
    expect(loaded).toEqual([]);
    expect(errors.join('')).toContain(message);
    expect(errors.join('')).toContain(USAGE);
  });
});
