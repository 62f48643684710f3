import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CliOutput } from './cli-output.js';

export type CommandLine = { values: Record<string, unknown> } | { exitCode: number };

/**
 * node:util's parseArgs with the conventions both CLIs share: `--help`/`-h` prints the usage (exit 0), an
 * unknown or malformed option prints the problem and the usage (exit 2).
 */
export function readCommandLine(
  argv: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
  usage: string,
  output: CliOutput,
): CommandLine {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args: [...argv],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
    }).values;
  } catch (error) {
    output.err(`${(error as Error).message}\n${usage}`);
    return { exitCode: 2 };
  }
  if (values.help) {
    output.out(usage);
    return { exitCode: 0 };
  }
  return { values };
}
