// Headings and links of a Markdown page, read the way GitHub renders it: what is inside fenced blocks and code
// spans is text, not Markdown.

/** A page's lines outside fenced code blocks, with their 1-based line numbers. */
function proseLines(markdown: string): { line: number; text: string }[] {
  const prose: { line: number; text: string }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (/^\s*```/.test(text)) fenced = !fenced;
    else if (!fenced) prose.push({ line: index + 1, text });
  });
  return prose;
}

/** A heading's anchor as GitHub makes it: link text kept, lower case, punctuation dropped, spaces as dashes. */
function anchorOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6} (.+)$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const anchor = anchorOf(heading);
    const repeats = seen.get(anchor) ?? 0;
    anchors.add(repeats ? `${anchor}-${repeats}` : anchor);
    seen.set(anchor, repeats + 1);
  }
  return anchors;
}

export interface MarkdownLink {
  line: number;
  /** The link's destination as written: a path, a path with `#anchor`, or `#anchor` alone. */
  target: string;
}

/** Inline links to files of the repository (no scheme such as `https:` or `mailto:`), outside code. */
export function relativeLinks(markdown: string): MarkdownLink[] {
  return proseLines(markdown).flatMap(({ line, text }) =>
    [...text.replace(/`[^`]*`/g, '').matchAll(/\]\(([^()\s]+)\)/g)]
      .map(([, target = '']) => ({ line, target }))
      .filter(({ target }) => !/^[a-z][a-z+.-]*:/i.test(target)),
  );
}
