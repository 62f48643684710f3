// The keyset cursor of GET /audit: opaque to clients, the id of the last record of the previous page.

export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ before: lastId })).toString('base64url');
}

/** The id the next page starts before, or undefined when the text is no cursor of ours. */
export function decodeCursor(cursor: string): string | undefined {
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { before?: unknown };
    const before = decoded.before;
    return typeof before === 'string' && /^[1-9][0-9]{0,18}$/.test(before) ? before : undefined;
  } catch {
    return undefined;
  }
}
