import { open } from 'node:fs/promises';

/** The last `lines` lines of a log file (read from its last `maxBytes` bytes); a note when it cannot be read. */
export async function readLogTail(path: string, lines = 20, maxBytes = 16_384): Promise<string> {
  try {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      const length = Math.min(size, maxBytes);
      const { buffer } = await file.read(Buffer.alloc(length), 0, length, size - length);
      return lastLines(buffer.toString('utf8'), lines);
    } finally {
      await file.close();
    }
  } catch (error) {
    return `(log not readable: ${(error as Error).message})`;
  }
}

export function lastLines(text: string, count: number): string {
  const lines = text.replace(/\n+$/, '').split('\n');
  return lines.slice(-count).join('\n');
}
