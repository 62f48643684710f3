import { readFileSync } from 'node:fs';

/** The labels of `policygrant_build_info`. */
export interface BuildInfo {
  /** package.json's version: the chart's appVersion and the image tag follow it. */
  version: string;
  /** The commit the image was built from: the Dockerfile sets BUILD_REVISION from its REVISION argument. */
  revision: string;
  /** The Node.js runtime, e.g. v26.12.1. */
  node: string;
}

// Two folders up from this module is the package root both from src/ (tsx) and from dist/ (the image copies
// package.json beside dist/).
const PACKAGE_JSON = new URL('../../package.json', import.meta.url);

/** What this process runs; the revision is `unknown` outside the image (a clone sets no BUILD_REVISION). */
export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return { version: packageVersion(), revision: env.BUILD_REVISION || 'unknown', node: process.version };
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;
}
