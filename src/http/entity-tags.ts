import { HttpError } from './errors.js';

// Entity tags (RFC 9110, section 8.8.3) and the If-Match precondition (section 13.1.1) of contested updates.

/** The strong entity tag of a version: the version quoted. */
export function entityTag(version: string): string {
  return `"${version}"`;
}

/** `"x"` or `W/"x"`, the opaque tag without DQUOTE or control characters, separated by commas. */
const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/**
 * The versions an If-Match header allows: the opaque parts of its strong tags. Weak tags never match in the
 * strong comparison If-Match uses, so they allow nothing. `*` is refused: it would match any version, and
 * the precondition is there to stop a decision on a version the caller has not seen.
 */
export function ifMatchVersions(header: string | undefined): string[] {
  if (header === undefined || header.trim() === '') {
    throw new HttpError(
      'PreconditionRequired',
      'If-Match: required; send the ETag of your last read of the object, so that a change made since then is not overwritten',
    );
  }
  return header.split(',').flatMap((part) => {
    const text = part.trim();
    if (text === '*') {
      throw new HttpError(
        'PreconditionRequired',
        'If-Match: * is not accepted; send the ETag of your last read',
      );
    }
    const match = ENTITY_TAG.exec(text);
    if (!match) throw new HttpError('BadRequest', `If-Match: ${JSON.stringify(text)} is not an entity tag`);
    return match[1] === undefined ? [match[2] as string] : [];
  });
}

/** 412 unless `current` is one of the versions the If-Match header allows. */
export function assertIfMatch(header: string | undefined, current: string): void {
  if (!ifMatchVersions(header).includes(current)) {
    throw new HttpError(
      'PreconditionFailed',
      `If-Match: the object changed since that read (now ${entityTag(current)}); read it again and decide on what it says now`,
    );
  }
}
