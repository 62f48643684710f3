import { StringDecoder } from 'node:string_decoder';
import type { IncomingMessage } from 'node:http';
import { KubeApiError } from './api-error.js';
import { readBody, type KubeClient } from './kube-client.js';
import type { QueryParams } from './kube-request.js';

/** Receives the raw watch stream: one parsed JSON event per line, then exactly one close. */
export interface RawWatchHandlers {
  onEvent(event: unknown): void;
  /** `error` is undefined when the server ended the stream normally (e.g. after `timeoutSeconds`). */
  onClose(error?: unknown): void;
}

/** Stops the watch; no handler is called afterwards. Safe to call at any time, also before the answer. */
export type StopWatch = () => void;

class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  push(chunk: Buffer): string[] {
    const lines = (this.pending + this.decoder.write(chunk)).split('\n');
    this.pending = lines.pop() ?? '';
    return lines.filter((line) => line.trim() !== '');
  }
}

function streamEvents(response: IncomingMessage, handlers: RawWatchHandlers, isStopped: () => boolean): void {
  const splitter = new LineSplitter();
  let ended = false;
  response.on('data', (chunk: Buffer) => {
    for (const line of splitter.push(chunk)) {
      if (isStopped()) {
        return;
      }
      try {
        handlers.onEvent(JSON.parse(line));
      } catch (err) {
        // An unparsable line or a handler that threw ends this watch; the caller decides how to recover.
        handlers.onClose(err);
        return;
      }
    }
  });
  response.on('end', () => {
    ended = true;
    handlers.onClose();
  });
  response.on('error', (err) => handlers.onClose(err));
  response.on('close', () => {
    if (!ended) {
      handlers.onClose(new Error('watch connection closed before the stream ended'));
    }
  });
}

/** Opens `GET path?watch=true&...` and streams its events. */
export function openWatchStream(
  kube: KubeClient,
  path: string,
  query: QueryParams,
  handlers: RawWatchHandlers,
): StopWatch {
  const abort = new AbortController();
  let closed = false;
  const isStopped = (): boolean => closed;
  const whileOpen: RawWatchHandlers = {
    onEvent: (event) => {
      if (!closed) {
        handlers.onEvent(event);
      }
    },
    onClose: (error) => {
      if (!closed) {
        closed = true;
        abort.abort();
        handlers.onClose(error);
      }
    },
  };
  const open = async (): Promise<void> => {
    const response = await kube.open({
      method: 'GET',
      path,
      query: { ...query, watch: true },
      signal: abort.signal,
    });
    if (response.statusCode !== 200) {
      throw KubeApiError.fromBody(response.statusCode ?? 0, await readBody(response));
    }
    streamEvents(response, whileOpen, isStopped);
  };
  open().catch((err: unknown) => whileOpen.onClose(err));
  return () => {
    closed = true;
    abort.abort();
  };
}
