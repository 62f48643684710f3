import { z } from 'zod';
import { urnOf } from './urn.js';
import type { UrnScheme } from './urn.js';

export const SUCCESS_KIND = 'Success';

export interface PaginationInfo {
  offset: number;
  limit: number;
  totalHits: number;
}

/** The ACL service's envelope: listings carry `results` and `paginationInfo`, creates carry `results`. */
export interface SuccessEnvelope<T = unknown> {
  type: string;
  title: string;
  detail?: string;
  results?: T[];
  paginationInfo?: PaginationInfo;
}

/** The decision service's envelope: the same shape with one payload under `result`. */
export interface ResultEnvelope<T> {
  type: string;
  title: string;
  detail?: string;
  result: T;
}

export function successEnvelope<T>(
  scheme: UrnScheme,
  content: Omit<SuccessEnvelope<T>, 'type'>,
): SuccessEnvelope<T> {
  return { type: urnOf(scheme, SUCCESS_KIND), ...content };
}

export function resultEnvelope<T>(
  scheme: UrnScheme,
  content: Omit<ResultEnvelope<T>, 'type'>,
): ResultEnvelope<T> {
  return { type: urnOf(scheme, SUCCESS_KIND), ...content };
}

// Schemas below describe the envelopes in the OpenAPI document (and check responses in tests).

export const paginationInfoSchema = z
  .object({
    offset: z.int().min(0),
    limit: z.int().min(1),
    totalHits: z.int().min(0),
  })
  .meta({ id: 'PaginationInfo' });

export const problemSchema = z
  .object({
    type: z
      .string()
      .meta({ description: 'urn:<namespace>:<service>:<Kind>', example: 'urn:dx:acl:Forbidden' }),
    title: z.string(),
    detail: z.string(),
  })
  .meta({ id: 'Problem', description: 'Error body' });

export interface SuccessEnvelopeSchemaOptions<T extends z.ZodType> {
  /** Schema of one item of `results`; no `results` when absent. */
  results?: T;
  /** Listings: `paginationInfo` is present. */
  paginated?: boolean;
  /** `detail` is present (creates and deletes). */
  detail?: boolean;
}

export function successEnvelopeSchema<T extends z.ZodType>(
  scheme: UrnScheme,
  options: SuccessEnvelopeSchemaOptions<T> = {},
) {
  return z.object({
    type: z.literal(urnOf(scheme, SUCCESS_KIND)),
    title: z.string(),
    ...(options.detail ? { detail: z.string() } : {}),
    ...(options.results ? { results: z.array(options.results) } : {}),
    ...(options.paginated ? { paginationInfo: paginationInfoSchema } : {}),
  });
}

export function resultEnvelopeSchema<T extends z.ZodType>(scheme: UrnScheme, result: T) {
  return z.object({
    type: z.literal(urnOf(scheme, SUCCESS_KIND)),
    title: z.string(),
    detail: z.string().optional(),
    result,
  });
}
