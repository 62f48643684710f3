import { agentName, type Agent } from '../../api/v1alpha1/index.js';
import { hasRole, type Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import { isNotFound } from '../../kube/index.js';
import { explain, type Explanation, type ExplanationView, type Subject } from '../../verdict/explanation.js';
import type { AclCache } from '../acl-cache.js';
import { COS_ADMIN, isOrgAdminOf, mayLearnItemFacts } from '../authorisation.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { paths } from '../resources.js';

export interface ExplainerOptions {
  cache: AclCache;
  kube: KubeClient;
  namespace: string;
  now: () => Date;
}

/**
 * GET /explain: the explanation of the one verdict over the ACL API's cache, for those who may learn the item's
 * facts (its owner, an org_admin of its organisation, cos_admin). Membership facts are shown only for the
 * organisations the caller administers (org_admin of it, or cos_admin): a provider names other organisations in
 * its GROUP grants without administering them. An agent's owner is read from its Agent object, which the cache
 * does not hold.
 */
export class Explainer {
  constructor(private readonly options: ExplainerOptions) {}

  async explain(
    principal: Principal,
    subject: Subject,
    itemId: string,
    accessType: string,
  ): Promise<Explanation> {
    const { cache, now } = this.options;
    if (!mayLearnItemFacts(principal, cache.itemsWithId(itemId))) {
      throw new HttpError(
        'Forbidden',
        `only the owner of item ${itemId}, an org_admin of its organisation or a cos_admin may explain access to it`,
        { title: 'Not allowed to explain' },
      );
    }
    const owner = subject.type === 'agent' ? await this.agentOwner(subject.id) : undefined;
    // The cache as this caller reads it: the agent's owner looked up for the request, only the memberships
    // it may see.
    const view: ExplanationView = Object.assign(Object.create(cache) as AclCache, {
      agentOwner: () => owner,
      disclosesMembership: (organisationId: string) =>
        hasRole(principal, COS_ADMIN) || isOrgAdminOf(principal, organisationId),
    });
    return explain({ subject, itemId, accessType }, view, now());
  }

  private async agentOwner(agentId: string): Promise<string | undefined> {
    const { kube, namespace } = this.options;
    try {
      const agent = await kube.call<Agent>({
        method: 'GET',
        path: paths.agent(namespace, agentName(agentId)),
      });
      return agent.spec.agentId === agentId ? agent.spec.ownerId : undefined;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}
