/**
 * The revision a ZedToken names, as a string that is equal for two tokens of the same revision of the same
 * datastore. ZedTokens are opaque to clients, and two tokens of one revision need not be equal: SpiceDB v1.57
 * adds the schema hash it knew when it issued one (a Watch's tokens carry it, a write's do not). A token is the
 * base64 of SpiceDB's `DecodedZedToken` (proto/internal/impl/v1/impl.proto): field 3 (`v1`) holds the revision
 * (field 1) and the datastore id's prefix (field 2), both kept here; the schema hash (field 3) is not. A token
 * that does not decode so (a legacy or foreign one) stands for itself.
 */
export function zedTokenRevision(token: string): string {
  try {
    const v1 = lengthDelimited(Buffer.from(token, 'base64')).get(V1_ZED_TOKEN);
    if (!v1) return token;
    const inner = lengthDelimited(v1);
    const revision = inner.get(REVISION);
    if (!revision) return token;
    return `${text(inner.get(DATASTORE_PREFIX))}/${text(revision)}`;
  } catch {
    return token;
  }
}

const V1_ZED_TOKEN = 3;
const REVISION = 1;
const DATASTORE_PREFIX = 2;

const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/** The length-delimited fields of a protobuf message by number (the last one wins); other wire types skipped. */
function lengthDelimited(message: Uint8Array): Map<number, Uint8Array> {
  const fields = new Map<number, Uint8Array>();
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      if (at >= message.length || shift > 49) throw new Error('malformed varint');
      const byte = message[at++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < message.length) {
    const key = varint();
    const wireType = key % 8;
    const field = Math.floor(key / 8);
    if (wireType === 0) varint();
    else if (wireType === 1) at += 8;
    else if (wireType === 5) at += 4;
    else if (wireType === 2) {
      const length = varint();
      if (at + length > message.length) throw new Error('truncated field');
      fields.set(field, message.subarray(at, at + length));
      at += length;
    } else throw new Error(`wire type ${wireType}`);
  }
  if (at !== message.length) throw new Error('truncated message');
  return fields;
}
