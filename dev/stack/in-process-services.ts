import { aclConfigFromEnvironment } from '../../src/acl/acl-config.js';
import { startAclApi } from '../../src/acl/acl-server.js';
import { controllerConfigFromEnvironment } from '../../src/controller/controller-config.js';
import { startController } from '../../src/controller/start-controller.js';
import { decisionConfigFromEnvironment } from '../../src/decision/decision-config.js';
import { startDecisionService } from '../../src/decision/decision-service.js';
import { waitForFirstResync } from './first-resync.js';
import type { ServiceLauncher } from './service-launcher.js';

/** `npm start`'s way: the three services in this process, each with its own port and registry. */
export const inProcessServices: ServiceLauncher = {
  async controller(env) {
    const controller = await startController(controllerConfigFromEnvironment(env));
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
    const service = await startDecisionService(decisionConfigFromEnvironment(env));
    const { url } = service;
    return { name: 'decision-service', url, rootUrl: url, pid: process.pid, stop: () => service.stop() };
  },
  async aclApi(env) {
    const api = await startAclApi(aclConfigFromEnvironment(env));
    return { name: 'acl-api', url: api.url, rootUrl: api.rootUrl, pid: process.pid, stop: () => api.stop() };
  },
};
