import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../hack/sync-packaging.js';
import { COMMANDS } from '../../../src/cmd/main.js';

// What the image's build stage compiles (`npm run build:image`, tsconfig.image.json): the services' entrypoints
// and what they import, nothing of the development stack. The program is resolved, not emitted: its source
// files are exactly the files the build writes to dist/.

/** The source files of the program a tsconfig of the repository resolves. */
function programSources(tsconfig: string): string[] {
  const configPath = join(REPO_ROOT, tsconfig);
  const { config } = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, REPO_ROOT, undefined, configPath);
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  return program
    .getSourceFiles()
    .filter((file) => !file.isDeclarationFile)
    .map((file) => relative(REPO_ROOT, file.fileName));
}

describe('the image build (tsconfig.image.json)', () => {
  const sources = programSources('tsconfig.image.json');

  it('compiles the dispatcher and every command it can start', () => {
    expect(sources).toContain('src/cmd/main.ts');
    for (const service of COMMANDS) expect(sources).toContain(`src/cmd/${service}.ts`);
  });

  it('leaves out the development stack, the local control plane and the developer CLIs', () => {
    expect(sources.filter((source) => !source.startsWith('src/'))).toEqual([]);
  });

  it('leaves out the kubectl plugin, a user tool run from a clone', () => {
    expect(sources.filter((source) => source.startsWith('src/kubectl-grants/'))).toEqual([]);
  });
});

describe('src/ (tsconfig.build.json)', () => {
  const sources = programSources('tsconfig.build.json');

  it('imports nothing outside src/: the development tooling in dev/ is beside the product, not in it', () => {
    expect(sources).toContain('src/cmd/main.ts');
    expect(sources.filter((source) => !source.startsWith('src/'))).toEqual([]);
  });
});
