import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHART_DIR, REPO_ROOT } from '../../../hack/sync-packaging.js';

// The container image's contract with the chart: one image, non-root by number, production dependencies only,
// the entrypoint that selects a service, and the file layout the chart mounts the SpiceDB model into.

const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
const stages = instructions
  .join('\n')
  .split(/^FROM /m)
  .slice(1);
const runtime = stages.at(-1) ?? '';

describe('Dockerfile', () => {
  it('builds in one stage, installs production dependencies in another, and runs from a fresh one', () => {
    expect(stages.map((stage) => stage.split('\n')[0])).toEqual([
      '${NODE_IMAGE} AS build',
      '${NODE_IMAGE} AS dependencies',
      '${NODE_IMAGE} AS runtime',
    ]);
    expect(stages[0]).toMatch(/^RUN npm ci\b/m);
    expect(stages[0]).toMatch(/^RUN npm run build:image$/m);
    expect(stages[1]).toMatch(/^RUN npm ci --omit=dev --omit=optional\b/m);
    expect(runtime).toMatch(/^COPY --from=dependencies \/src\/node_modules \.\/node_modules$/m);
    expect(runtime).toMatch(/^COPY --from=build \/src\/dist \.\/dist$/m);
    expect(runtime).not.toMatch(/^COPY (src|\.) /m);
  });

  it('the runtime has no package manager: npm, npx and corepack are removed, and nothing runs them', () => {
    const removal = /^RUN rm -rf (.+)$/m.exec(runtime)?.[1]?.split(/\s+/) ?? [];
    for (const path of [
      '/usr/local/lib/node_modules/npm',
      '/usr/local/lib/node_modules/corepack',
      '/usr/local/bin/npm',
      '/usr/local/bin/npx',
      '/usr/local/bin/corepack',
    ])
      expect(removal).toContain(path);
    const runs = runtime.split('\n').filter((line) => /^(RUN|ENTRYPOINT|CMD) /.test(line));
    expect(
      runs.filter((line) => /\b(npm|npx|corepack|yarn)\b/.test(line) && !line.startsWith('RUN rm ')),
    ).toEqual([]);
  });

  it('labels the image with its source, version and revision (OCI annotations from build arguments)', () => {
    for (const [label, argument] of [
      ['source', 'SOURCE'],
      ['version', 'VERSION'],
      ['revision', 'REVISION'],
    ]) {
      expect(runtime).toMatch(new RegExp(`^ARG ${argument}=\\S+$`, 'm'));
      expect(runtime).toContain(`org.opencontainers.image.${label}="\${${argument}}"`);
    }
  });

  it('gives the services the revision for policygrant_build_info (BUILD_REVISION)', () => {
    expect(runtime).toMatch(/^ENV BUILD_REVISION="\$\{REVISION\}"$/m);
  });

  it('pins a slim Node.js base image by its full version', () => {
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(instructions.join('\n'))?.[1];
    expect(base).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+-slim$/);
    expect(stages.every((stage) => stage.startsWith('${NODE_IMAGE} AS '))).toBe(true);
  });

  it('runs as a numeric non-root user, through the dispatcher that selects the service', () => {
    const user = /^USER (\d+)(?::(\d+))?$/m.exec(runtime);
    expect(Number(user?.[1])).toBeGreaterThan(0);
    expect(runtime).toMatch(/^ENTRYPOINT \["node", "dist\/cmd\/main\.js"\]$/m);
    expect(runtime).not.toMatch(/^CMD /m);
  });

  it('puts the build where the chart mounts the SpiceDB schema and registry (/app/dist/spicedb)', () => {
    expect(runtime).toMatch(/^WORKDIR \/app$/m);
    const helpers = readFileSync(join(CHART_DIR, 'templates/_helpers.tpl'), 'utf8');
    expect(helpers).toMatch(/define "pgo.spicedbModelDir" -}}\n\/app\/dist\/spicedb\n/);
    const chartUser = /runAsUser: (\d+)/.exec(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'))?.[1];
    expect(runtime).toContain(`USER ${chartUser}:`);
  });

  it('sends only the build inputs to the build context', () => {
    const ignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'));
    expect(ignore[0]).toBe('*');
    expect(ignore.slice(1).sort()).toEqual(
      [
        '!package.json',
        '!package-lock.json',
        '!src',
        '!tsconfig.build.json',
        '!tsconfig.image.json',
        '!tsconfig.json',
      ].sort(),
    );
    for (const copied of runtime.concat(stages[0] ?? '').matchAll(/^COPY (?!--from)(.+) \S+$/gm))
      for (const source of (copied[1] as string).split(' ')) expect(ignore).toContain(`!${source}`);
  });
});
