import { pino } from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/** Used when a component is given no logger. */
export const silentLogger: Logger = pino({ level: 'silent' });
