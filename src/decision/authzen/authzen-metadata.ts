import { z } from 'zod';

/** The AuthZEN routes, at the service root (a gateway maps its public prefix onto them by strip-prefix). */
export const AUTHZEN_PATHS = {
  evaluation: '/access/v1/evaluation',
  evaluations: '/access/v1/evaluations',
  searchSubject: '/access/v1/search/subject',
  searchResource: '/access/v1/search/resource',
  searchAction: '/access/v1/search/action',
  metadata: '/.well-known/authzen-configuration',
} as const;

export const authzenMetadataSchema = z
  .object({
    policy_decision_point: z.string().meta({ description: 'The base URL of this decision point' }),
    access_evaluation_endpoint: z.string(),
    access_evaluations_endpoint: z.string(),
    search_subject_endpoint: z.string(),
    search_resource_endpoint: z.string(),
    search_action_endpoint: z.string(),
  })
  .meta({ id: 'AuthzenMetadata' });
export type AuthzenMetadata = z.output<typeof authzenMetadataSchema>;

/** How long a client may keep the metadata: it changes only when the service is configured anew. */
export const METADATA_CACHE_CONTROL = 'public, max-age=3600';

/** The decision point's identifier: the public base URL without a trailing slash. */
export function decisionPointIdentifier(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '');
}

/**
 * Where the metadata of the decision point `publicUrl` is served: the well-known string inserted between the
 * host and the path (RFC 8615, as AuthZEN says), so `https://gw.example/decision` has it at
 * `/.well-known/authzen-configuration/decision`. A gateway forwards that path unchanged.
 */
export function metadataPath(publicUrl: string): string {
  return AUTHZEN_PATHS.metadata + new URL(decisionPointIdentifier(publicUrl)).pathname.replace(/^\/$/, '');
}

/** The decision point's metadata (AuthZEN 1.0), its endpoints under `baseUrl` (no trailing slash). */
export function authzenMetadata(baseUrl: string): AuthzenMetadata {
  const base = decisionPointIdentifier(baseUrl);
  return {
    policy_decision_point: base,
    access_evaluation_endpoint: base + AUTHZEN_PATHS.evaluation,
    access_evaluations_endpoint: base + AUTHZEN_PATHS.evaluations,
    search_subject_endpoint: base + AUTHZEN_PATHS.searchSubject,
    search_resource_endpoint: base + AUTHZEN_PATHS.searchResource,
    search_action_endpoint: base + AUTHZEN_PATHS.searchAction,
  };
}
