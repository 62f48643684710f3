import { createServer, type Server } from 'node:net';

export interface OccupiedPort {
  release(): Promise<void>;
}

/** Holds `port` on loopback, as another program would; connections to it are dropped at once. */
export function occupyPort(port: number): Promise<OccupiedPort> {
  return new Promise((resolve, reject) => {
    const server: Server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () =>
      resolve({ release: () => new Promise((closed) => server.close(() => closed())) }),
    );
  });
}
