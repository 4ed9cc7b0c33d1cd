// JSON logs (pino, Fastify's own): request id on every line, credentials and secrets redacted (D13).
import type { LoggerOptions } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'client_secret',
  '*.client_secret',
  'signing_secret',
  '*.signing_secret',
  'access_token',
  '*.access_token',
  'password',
  '*.password',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'payment-service', pid: process.pid },
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
  };
}
