import { z } from 'zod';

const MAX_DECIMAL_DIGITS = 9;

/**
 * A query parameter holding a whole number from `minimum` to `maximum` (at most nine digits), as plain decimal
 * text: no sign, exponent or leading zeros. The document states it as an integer with its bounds and default,
 * which is how a client serialises it; the server reads the text and enforces the same bounds.
 */
export function queryInteger(
  name: string,
  bounds: { minimum: number; maximum?: number; default: number; description: string },
) {
  const maximum = bounds.maximum ?? 10 ** MAX_DECIMAL_DIGITS - 1;
  return z
    .string()
    .regex(
      new RegExp(`^(0|[1-9][0-9]{0,${MAX_DECIMAL_DIGITS - 1}})$`),
      `${name} must be a non-negative decimal integer`,
    )
    .transform(Number)
    .pipe(z.int().min(bounds.minimum).max(maximum))
    .optional()
    .default(bounds.default)
    .meta({
      type: 'integer',
      minimum: bounds.minimum,
      maximum,
      default: bounds.default,
      description: bounds.description,
    });
}
