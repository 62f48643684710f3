import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../hack/sync-packaging.js';
import { headingAnchors, relativeLinks } from '../../support/markdown.js';

// The pages a reader follows links through: every relative link names a file of the repository and, where it
// names a heading, a heading of that page. Pages stay short enough to read: the README a front door, the
// reference pages of docs/ split by topic.

const README_MAX_BYTES = 12 * 1024;
const DOCS_PAGE_MAX_BYTES = 30 * 1024;

function markdownUnder(folder: string): string[] {
  return readdirSync(join(REPO_ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => join(folder, file));
}

const DOCS_PAGES = markdownUnder('docs');
const CHART_READMES = readdirSync(join(REPO_ROOT, 'charts')).map((chart) =>
  join('charts', chart, 'README.md'),
);
const PAGES = ['README.md', 'bench/README.md', ...DOCS_PAGES, ...CHART_READMES];

const text = (page: string) => readFileSync(join(REPO_ROOT, page), 'utf8');
const bytes = (page: string) => statSync(join(REPO_ROOT, page)).size;

/** What is wrong with a link of `page`, or undefined when it resolves. */
function brokenLink(page: string, target: string): string | undefined {
  const [path = '', anchor] = target.split('#');
  const file = path ? join(dirname(page), decodeURI(path)) : page;
  if (!existsSync(join(REPO_ROOT, file))) return `${target}: no file ${file}`;
  if (anchor === undefined || !file.endsWith('.md')) return undefined;
  if (headingAnchors(text(file)).has(anchor)) return undefined;
  return `${target}: no heading #${anchor} in ${relative('.', file)}`;
}

describe('the docs', () => {
  it.each(PAGES)('%s: every relative link and anchor resolves', (page) => {
    const broken = relativeLinks(text(page)).flatMap(({ line, target }) => {
      const problem = brokenLink(page, target);
      return problem ? [`${page}:${line}: ${problem}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('keeps the README a front door', () => {
    expect(bytes('README.md')).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it('keeps every page of docs/ short enough to read in one sitting', () => {
    const long = DOCS_PAGES.filter((page) => bytes(page) > DOCS_PAGE_MAX_BYTES).map(
      (page) => `${page}: ${bytes(page)} bytes`,
    );
    expect(long).toEqual([]);
  });
});
