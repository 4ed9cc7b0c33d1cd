// Operator actions (D23): every request to an operator route that names its action is logged once, when
// its answer is sent, with the action, the actor, the outcome and what it acted on. The operator API has one
// credential (ADMIN_API_KEY), so the actor is that key's holder at a client address; the line also has
// the request id that ties it to the access line and to any error line (error_id).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../platform/deps.ts';
import { toAppError } from '../platform/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operator action a route performs (D23), e.g. `corridor.create`; logged with actor and outcome. */
    operatorAction?: string;
  }
}

interface Noted {
  target: Record<string, unknown>;
  errorCode?: string;
  /** The client's address, read while its connection is open. */
  address?: string;
  logged?: boolean;
}

const noted = new WeakMap<FastifyRequest, Noted>();

function note(request: FastifyRequest): Noted {
  let entry = noted.get(request);
  if (!entry) {
    entry = { target: {} };
    noted.set(request, entry);
  }
  return entry;
}

/** What the action acted on (`corridor_id`, `provider`, ...), added to its log line. */
export function operatorTarget(request: FastifyRequest, target: Record<string, unknown>): void {
  Object.assign(note(request).target, target);
}

export type OperatorOutcome = 'succeeded' | 'refused' | 'failed';

/**
 * Registers an area's operator routes in a plugin of their own under the operator API, with the action
 * log installed: each of its routes that sets `config.operatorAction` gets one `operator_action` line,
 * whatever the outcome, also when the client has hung up before the answer.
 */
export function registerOperatorRoutes(admin: App, register: (scope: App) => void): void {
  admin.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
    logOperatorActions(scope);
    register(scope);
  });
}

function logOperatorActions(scope: App): void {
  // A connection closed by the client has no address left to read by the time the action is logged.
  scope.addHook('onRequest', async (request) => {
    note(request).address = request.ip;
  });
  scope.addHook('onError', async (request, _reply, error) => {
    note(request).errorCode = toAppError(error)?.code ?? 'INTERNAL_ERROR';
  });
  // Logged when the answer is sent, not when it has gone out (onResponse): a client that hangs up once its
  // request is in still has the action carried out, and its answer then never finishes going out.
  scope.addHook('onSend', async (request, reply) => {
    const action = request.routeOptions.config.operatorAction;
    if (action === undefined) return;
    const entry = note(request);
    // An answer replaced by an error (a failing onSend hook) is sent again: the action is logged once.
    if (entry.logged) return;
    entry.logged = true;
    const status = reply.statusCode;
    const outcome: OperatorOutcome = status < 400 ? 'succeeded' : status < 500 ? 'refused' : 'failed';
    request.log.info(
      {
        // What the action acted on first, so that it can never overwrite the fields below: the path's ids
        // (also for a request refused before its handler ran), then what the handler noted.
        ...(request.params as Record<string, unknown> | undefined),
        ...entry.target,
        operator_action: action,
        // A request without the valid key acted as nobody.
        actor: {
          credential: entry.errorCode === 'UNAUTHORIZED' ? 'none' : 'ADMIN_API_KEY',
          address: entry.address ?? request.ip,
        },
        outcome,
        status,
        ...(entry.errorCode !== undefined ? { error_code: entry.errorCode } : {}),
      },
      `operator action ${action} ${outcome}`,
    );
  });
}
