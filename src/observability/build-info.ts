import { existsSync, readFileSync } from 'node:fs';

/** The labels of `policygrant_build_info`. */
export interface BuildInfo {
  /** package.json's version: the chart's appVersion and the image tag follow it. */
  version: string;
  /** The commit the image was built from: the Dockerfile sets BUILD_REVISION from its REVISION argument. */
  revision: string;
  /** The Node.js runtime, e.g. v26.12.1. */
  node: string;
}

/** What this process runs; the revision is `unknown` outside the image (a clone sets no BUILD_REVISION). */
export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return { version: packageVersion(), revision: env.BUILD_REVISION || 'unknown', node: process.version };
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(nearestPackageJson(import.meta.url), 'utf8')) as { version: string })
    .version;
}

/**
 * The package.json nearest above `moduleUrl`: the package root from src/ (tsx), from dist/ in the image (which
 * copies package.json beside dist/) and from a benchmark's build below dist/.
 */
export function nearestPackageJson(moduleUrl: string): URL {
  for (let folder = new URL('.', moduleUrl); ; folder = new URL('..', folder)) {
    const candidate = new URL('package.json', folder);
    if (existsSync(candidate)) return candidate;
    if (folder.pathname === '/') throw new Error(`no package.json above ${new URL(moduleUrl).pathname}`);
  }
}
