/**
 * Reversible, collision-free encoding of arbitrary ids (item ids are URNs) into SpiceDB object ids, which
 * allow only `[a-zA-Z0-9/_|\-=+]` and at most 1024 bytes. Bytes of `[a-zA-Z0-9/_-]` stay as they are; every
 * other UTF-8 byte, `=` included, becomes `=XX` (uppercase hex): `urn:dx:item:1` → `urn=3Adx=3Aitem=3A1`.
 * The output never contains `|`, `+` or `*`: `|` joins the two parts of a group id.
 */

export const MAX_OBJECT_ID_BYTES = 1024;

export type InvalidObjectIdReason = 'empty' | 'too_long' | 'malformed';

/** An id that cannot be (or was not) encoded; the HTTP layer answers 400 naming the field. */
export class InvalidObjectIdError extends Error {
  override readonly name = 'InvalidObjectIdError';

  constructor(
    readonly reason: InvalidObjectIdReason,
    message: string,
  ) {
    super(message);
  }
}

const ESCAPE = '=';
const GROUP_SEPARATOR = '|';
const ENCODED_FORM = /^(?:[A-Za-z0-9/_-]|=[0-9A-F]{2})+$/;
const KEPT_ONLY = /^[A-Za-z0-9/_-]+$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
const NOT_KEPT = /[^A-Za-z0-9/_-]/g;
const NON_ASCII_ESCAPE = /=[89A-F]/;
// With the u flag a well-formed surrogate pair is one code point, so this finds only lone surrogates,
// which UTF-8 cannot represent (TextEncoder would silently turn them into U+FFFD).
const LONE_SURROGATE = /\p{Cs}/u;
const utf8Encoder = new TextEncoder();
// ignoreBOM keeps a leading U+FEFF, which is part of the id, not a byte-order mark.
const strictUtf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isKeptByte(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) || // 0-9
    (byte >= 0x41 && byte <= 0x5a) || // A-Z
    (byte >= 0x61 && byte <= 0x7a) || // a-z
    byte === 0x2f || // /
    byte === 0x5f || // _
    byte === 0x2d // -
  );
}

function escapeByte(byte: number): string {
  return ESCAPE + byte.toString(16).toUpperCase().padStart(2, '0');
}

function tooLong(): InvalidObjectIdError {
  return new InvalidObjectIdError(
    'too_long',
    `id is too long: encoded it exceeds ${MAX_OBJECT_ID_BYTES} bytes`,
  );
}

/** Encoded ids are ASCII, so their length is their size in bytes. */
function assertFits(objectId: string): string {
  if (objectId.length > MAX_OBJECT_ID_BYTES) throw tooLong();
  return objectId;
}

export function encodeObjectId(id: string): string {
  if (id.length === 0) throw new InvalidObjectIdError('empty', 'id must not be empty');
  // Most ids (UUIDs) need no escape: they are their own encoding.
  if (KEPT_ONLY.test(id)) return assertFits(id);
  // Printable ASCII (item URNs): every character is one byte, escaped in place without an array of its bytes.
  if (PRINTABLE_ASCII.test(id))
    return assertFits(id.replace(NOT_KEPT, (char) => escapeByte(char.charCodeAt(0))));
  if (LONE_SURROGATE.test(id)) throw new InvalidObjectIdError('malformed', 'id is not well-formed Unicode');
  const bytes = utf8Encoder.encode(id);
  // Encoding never shrinks: skip the work for ids that cannot fit.
  if (bytes.length > MAX_OBJECT_ID_BYTES) throw tooLong();
  // Joined rather than appended piece by piece: V8 keeps a string built with += as a tree of its pieces (a
  // rope, tens of bytes per piece) for as long as it lives, and encoded ids live on in keys held by the thousand.
  const pieces = Array.from(bytes, (byte) =>
    isKeptByte(byte) ? String.fromCharCode(byte) : escapeByte(byte),
  );
  return assertFits(pieces.join(''));
}

export function decodeObjectId(objectId: string): string {
  if (!ENCODED_FORM.test(objectId)) {
    throw new InvalidObjectIdError(
      'malformed',
      `not an encoded id: ${JSON.stringify(objectId.slice(0, 64))}`,
    );
  }
  // The encoder's fast paths in reverse (searches decode ids by the thousand): an id without escapes is its own
  // decoding, and escapes of ASCII bytes are single characters.
  if (!objectId.includes(ESCAPE)) return objectId;
  if (!NON_ASCII_ESCAPE.test(objectId)) return decodeAsciiEscapes(objectId);
  const bytes: number[] = [];
  for (let index = 0; index < objectId.length; index++) {
    if (objectId[index] !== ESCAPE) {
      bytes.push(objectId.charCodeAt(index));
      continue;
    }
    bytes.push(escapedByte(objectId.slice(index, index + 3)));
    index += 2;
  }
  try {
    return strictUtf8Decoder.decode(Uint8Array.from(bytes));
  } catch {
    throw new InvalidObjectIdError('malformed', 'escapes do not form UTF-8');
  }
}

/** The character of each escape of an ASCII byte the encoder escapes: every escape `decodeAsciiEscapes` accepts. */
const ASCII_ESCAPES = new Map(
  Array.from({ length: 0x80 }, (_, byte) => byte)
    .filter((byte) => !isKeptByte(byte))
    .map((byte) => [escapeByte(byte), String.fromCharCode(byte)]),
);

/**
 * An encoded id whose escapes are all of ASCII bytes, decoded. A loop over the escapes rather than a replace
 * with a callback, which costs three times as much (searches decode ids by the thousand).
 */
function decodeAsciiEscapes(objectId: string): string {
  let decoded = '';
  let start = 0;
  for (let index = objectId.indexOf(ESCAPE); index >= 0; index = objectId.indexOf(ESCAPE, start)) {
    const escape = objectId.slice(index, index + 3);
    const char = ASCII_ESCAPES.get(escape);
    if (char === undefined) throw new InvalidObjectIdError('malformed', `needless escape ${escape}`);
    decoded += objectId.slice(start, index) + char;
    start = index + 3;
  }
  return decoded + objectId.slice(start);
}

/** The byte of an escape (`=` and two hex digits); only the encoder's own output decodes, so that every id has exactly one encoded form. */
function escapedByte(escape: string): number {
  const byte = Number.parseInt(escape.slice(1), 16);
  if (isKeptByte(byte)) throw new InvalidObjectIdError('malformed', `needless escape ${escapeByte(byte)}`);
  return byte;
}

/** A group is only meaningful within its organisation: its object id carries both. */
export function groupObjectId(organisationId: string, groupId: string): string {
  return assertFits(encodeObjectId(organisationId) + GROUP_SEPARATOR + encodeObjectId(groupId));
}
