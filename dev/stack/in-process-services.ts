import { aclConfigFromEnvironment, startAclApi } from '../../src/cmd/acl-api.js';
import { parseControllerConfig, startController } from '../../src/cmd/controller.js';
import { decisionConfigFromEnvironment, startDecisionService } from '../../src/cmd/decision-service.js';
import { waitForFirstResync } from './first-resync.js';
import type { ServiceLauncher } from './service-launcher.js';

/** `npm start`'s way: the three services in this process, each with its own port and registry. */
export const inProcessServices: ServiceLauncher = {
  async controller(env) {
    const controller = await startController(parseControllerConfig(env));
    return {
      name: 'controller',
      url: controller.url,
      rootUrl: controller.url,
      pid: process.pid,
      stop: () => controller.stop(),
      waitForFirstResync: (timeoutMs) => waitForFirstResync(controller, timeoutMs),
    };
  },
  async decisionService(env) {
    const service = await startDecisionService(await decisionConfigFromEnvironment(env));
    const { url } = service;
    return { name: 'decision-service', url, rootUrl: url, pid: process.pid, stop: () => service.stop() };
  },
  async aclApi(env) {
    const api = await startAclApi(await aclConfigFromEnvironment(env));
    return { name: 'acl-api', url: api.url, rootUrl: api.rootUrl, pid: process.pid, stop: () => api.stop() };
  },
};
