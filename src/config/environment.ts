import { z } from 'zod';

/** Thrown when the environment does not configure a service correctly; the message names every variable. */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

/** Parses environment variables with a zod object schema whose keys are the variable names. */
export function readEnvironment<Schema extends z.ZodType>(
  schema: Schema,
  env: NodeJS.ProcessEnv = process.env,
): z.output<Schema> {
  const parsed = schema.safeParse(withoutEmptyValues(env));
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`,
  );
  throw new ConfigurationError(`invalid configuration: ${problems.join('; ')}`);
}

// An exported-but-empty variable means "not set", as shells and Helm templates tend to produce them.
function withoutEmptyValues(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => !!entry[1]));
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/** Go's time.ParseDuration for the units that make sense here: `500ms`, `90s`, `10m`, `1h30m`. */
export function parseDuration(text: string): number {
  if (!DURATION.test(text)) throw new Error(`"${text}" is not a duration such as 30s, 10m or 1h30m`);
  let total = 0;
  for (const [, amount = '0', unit = 's'] of text.matchAll(DURATION_PART))
    total += Number(amount) * (UNIT_MS[unit] ?? 0);
  return Math.round(total);
}

/** A duration like `500ms`, `30s`, `10m`, `1h30m`, as milliseconds. */
export const duration = z
  .string()
  .regex(DURATION, 'a duration such as 500ms, 30s, 10m or 1h30m')
  .transform(parseDuration);

export const port = z.coerce.number().int().min(0).max(65_535);

/** Every boolean variable: `true` or `false`, nothing else, so that a typo is an error rather than a default. */
export const booleanFlag = z
  .enum(['true', 'false'], { error: 'expected true or false' })
  .transform((value) => value === 'true');

export const commaList = z.string().transform((text) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
);

/** A string variable read by `parse`, whose thrown message becomes the variable's issue. */
export function parsedWith<T>(parse: (text: string) => T) {
  return z.string().transform((text, context): T => {
    try {
      return parse(text);
    } catch (error) {
      context.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
}
