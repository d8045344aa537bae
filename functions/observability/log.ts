/**
 * Structured JSON logs (one object per line, Powertools Logger) with the request id on
 * every line. Never logs request bodies or auth headers.
 */
import { logger } from './powertools.js';

type Fields = Record<string, unknown>;

export const log = {
  debug: (msg: string, f: Fields = {}) => logger.debug(msg, f),
  info: (msg: string, f: Fields = {}) => logger.info(msg, f),
  warn: (msg: string, f: Fields = {}) => logger.warn(msg, f),
  error: (msg: string, f: Fields = {}) => logger.error(msg, f),
};
