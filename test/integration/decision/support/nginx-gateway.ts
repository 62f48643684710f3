import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../../../dev/localplane/free-port.js';
import { startProcess, type ManagedProcess } from '../../../../dev/localplane/managed-process.js';
import { repoRoot } from '../../../../dev/localplane/repo-root.js';
import { parseExports } from '../../../../dev/localplane/tool-paths.js';

/** The gateway configuration the docs show: docs/gateway/nginx (authzen.js, authzen.conf), used as it is. */
export const GATEWAY_CONFIG_DIR = join(repoRoot(), 'docs/gateway/nginx');

export interface GatewayOptions {
  stateDir: string;
  /** host:port of the data service nginx proxies to. */
  upstream: string;
  /** The decision service's POST /access/v1/evaluation. */
  evaluationUrl: string;
  /** The Authorization header of an enforcement point. */
  authorization: string;
}

export interface NginxGateway {
  url: string;
  process: ManagedProcess;
}

/** nginx and its njs module, the pinned Debian packages (installed by hack/tools/build.sh gateway, as root). */
async function nginxPaths(): Promise<{ nginx: string; jsModule: string }> {
  const { stdout } = await promisify(execFile)('bash', [join(repoRoot(), 'hack/tools/env.sh'), 'gateway']);
  const exported = parseExports(stdout);
  const [nginx, jsModule] = [exported.NGINX_BIN, exported.NGINX_JS_MODULE];
  if (!nginx || !jsModule) throw new Error('hack/tools/env.sh gateway did not name nginx and its njs module');
  return { nginx, jsModule };
}

/**
 * The site's part of the configuration around the docs' files: one process in the foreground (no daemon, no
 * workers to switch users), every path in the state folder, a loopback port.
 */
function siteConfig(options: GatewayOptions, jsModule: string, port: number): string {
  const at = (name: string) => join(options.stateDir, name);
  return `daemon off;
master_process off;
pid ${at('nginx.pid')};
load_module ${jsModule};
events { worker_connections 64; }
http {
  access_log ${at('access.log')};
  client_body_temp_path ${at('tmp/client_body')};
  proxy_temp_path ${at('tmp/proxy')};
  fastcgi_temp_path ${at('tmp/fastcgi')};
  uwsgi_temp_path ${at('tmp/uwsgi')};
  scgi_temp_path ${at('tmp/scgi')};
  js_path ${GATEWAY_CONFIG_DIR};
  js_import authzen from authzen.js;
  upstream data_service { server ${options.upstream}; }
  server {
    listen 127.0.0.1:${port};
    js_var $authzen_evaluation_url ${options.evaluationUrl};
    js_var $authzen_authorization "${options.authorization}";
    include ${join(GATEWAY_CONFIG_DIR, 'authzen.conf')};
  }
}
`;
}

/** nginx in front of `upstream`, asking the decision service; the caller waits until it answers. */
export async function startNginxGateway(options: GatewayOptions): Promise<NginxGateway> {
  const { nginx, jsModule } = await nginxPaths();
  const port = await freePort();
  await mkdir(join(options.stateDir, 'tmp'), { recursive: true });
  const config = join(options.stateDir, 'nginx.conf');
  await writeFile(config, siteConfig(options, jsModule, port));
  const process = startProcess({
    name: 'nginx',
    command: nginx,
    args: ['-p', options.stateDir, '-e', join(options.stateDir, 'error.log'), '-c', config],
    logFile: join(options.stateDir, 'nginx.log'),
  });
  return { url: `http://127.0.0.1:${port}`, process };
}
