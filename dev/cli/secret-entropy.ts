/**
 * A lower estimate of a secret's entropy: its length times the Shannon entropy of its own characters'
 * frequencies. Short, repetitive and small-alphabet secrets score low (`changeme`: 22 bits); a random 16-byte
 * secret in hex or base64 scores 87 bits or more. Words are not recognised: a passphrase scores as the
 * characters it uses.
 */
export function estimatedEntropyBits(secret: string): number {
  const characters = [...secret];
  const counts = new Map<string, number>();
  for (const character of characters) counts.set(character, (counts.get(character) ?? 0) + 1);
  let bitsPerCharacter = 0;
  for (const count of counts.values()) {
    const share = count / characters.length;
    bitsPerCharacter -= share * Math.log2(share);
  }
  return bitsPerCharacter * characters.length;
}

/** What an application secret must score: every random secret of 16 bytes or more does. */
export const MINIMUM_SECRET_BITS = 80;
