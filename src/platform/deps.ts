// What every module receives: configuration and shared resources, passed explicitly.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import type { Area, Catalogue } from './area.ts';
import type { Metrics } from './metrics.ts';
import type { SecretBox } from './secrets.ts';

/** The Fastify instance every module registers routes on: TypeBox schemas give the handler types. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface AppDeps {
  config: Config;
  pool: Pool;
  secretBox: SecretBox;
  metrics: Metrics;
  /** Every area of the service (src/areas.ts), passed in so that no module imports the list upwards. */
  areas: readonly Area[];
  /** What the areas declare: scopes, event types, timer handlers. */
  catalogue: Catalogue;
}

/** Which parts one process serves (D1 roles). */
export interface Components {
  /** The public API under /api/v1 and the operator API under /admin/v1. */
  api: boolean;
  /** The token endpoint, JWKS and discovery under /realms/{realm}. */
  auth: boolean;
}

/** The authenticated caller, set by the bearer hook (D6). */
export interface Principal {
  clientId: string;
  organisationId: string;
  scopes: string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /** The scope a route requires; routes with a scope require a bearer token (D6). */
    scope?: string;
    /**
     * The route honours the Idempotency-Key header (D14): a repeat replays the first response. Every
     * POST of the payment areas that creates something or changes a state sets it.
     */
    idempotent?: boolean;
  }
}
