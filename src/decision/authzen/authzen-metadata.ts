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

/** The decision point's metadata (AuthZEN 1.0), its endpoints under `baseUrl` (no trailing slash). */
export function authzenMetadata(baseUrl: string): AuthzenMetadata {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    policy_decision_point: base,
    access_evaluation_endpoint: base + AUTHZEN_PATHS.evaluation,
    access_evaluations_endpoint: base + AUTHZEN_PATHS.evaluations,
    search_subject_endpoint: base + AUTHZEN_PATHS.searchSubject,
    search_resource_endpoint: base + AUTHZEN_PATHS.searchResource,
    search_action_endpoint: base + AUTHZEN_PATHS.searchAction,
  };
}
