// `payment-service admin ...`: wraps the operator API (D7) for operators. Areas add their own commands
// (file imports and the like, D23): each turns its command line into operator API requests.
import { parseArgs } from 'node:util';
import { AREAS } from '../areas.ts';
import type { CliCommand, CliRequest } from '../platform/area.ts';
import type { ResealResult } from './secrets.ts';

const AREA_COMMANDS: readonly CliCommand[] = AREAS.flatMap((area) => area.cliCommands ?? []);

const USAGE = `Usage: payment-service admin <command> [options]

Commands:
  create-organisation --name <name>
  create-client --organisation-id <uuid> [--scopes webhooks:read,webhooks:write] [--name <name>]
  delete-client <client_id>
  rotate-signing-key
  secrets
  reseal-secrets [--limit <values per request>]
${AREA_COMMANDS.map((command) => `  ${command.usage}`).join('\n')}

Options:
  --url <base>   operator API base (default: ADMIN_URL, else http://127.0.0.1:$PORT)
Environment: ADMIN_API_KEY (required), ADMIN_URL, PORT`;

export async function runAdminCli(argv: string[], env = process.env): Promise<number> {
  const parsed = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'organisation-id': { type: 'string' },
      scopes: { type: 'string' },
      url: { type: 'string' },
      limit: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      ...(Object.assign({}, ...AREA_COMMANDS.map((command) => command.options ?? {})) as Record<
        string,
        { type: 'string' | 'boolean' }
      >),
    },
  });
  const { positionals } = parsed;
  const values = parsed.values as Record<string, string | undefined> & { help?: boolean };
  const [command, argument] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const key = env.ADMIN_API_KEY;
  if (!key) {
    process.stderr.write('ADMIN_API_KEY must be set to use the operator API\n');
    return 2;
  }
  const base = (values.url ?? env.ADMIN_URL ?? `http://127.0.0.1:${env.PORT ?? '8080'}`).replace(/\/+$/, '');
  let requests: CliRequest[];
  switch (command) {
    case 'create-organisation':
      requests = [{ method: 'POST', path: '/admin/v1/organisations', body: { name: values.name } }];
      break;
    case 'create-client':
      requests = [
        {
          method: 'POST',
          path: '/admin/v1/clients',
          body: {
            organisation_id: values['organisation-id'],
            ...(values.scopes ? { scopes: values.scopes.split(',').map((scope) => scope.trim()) } : {}),
            ...(values.name ? { name: values.name } : {}),
          },
        },
      ];
      break;
    case 'delete-client':
      if (!argument) {
        process.stderr.write('delete-client needs a client_id\n');
        return 2;
      }
      requests = [{ method: 'DELETE', path: `/admin/v1/clients/${encodeURIComponent(argument)}` }];
      break;
    case 'rotate-signing-key':
      requests = [{ method: 'POST', path: '/admin/v1/signing-keys/rotate' }];
      break;
    case 'secrets':
      requests = [{ method: 'GET', path: '/admin/v1/secrets' }];
      break;
    case 'reseal-secrets':
      if (values.limit !== undefined && !/^[1-9]\d*$/.test(values.limit)) {
        process.stderr.write('reseal-secrets: --limit must be a whole number of at least 1\n');
        return 2;
      }
      return resealAll(base, key, values.limit);
    default: {
      const areaCommand = AREA_COMMANDS.find((candidate) => candidate.name === command);
      if (!areaCommand) {
        process.stderr.write(`Unknown admin command "${command}"\n${USAGE}\n`);
        return 2;
      }
      try {
        requests = await areaCommand.requests(positionals.slice(1), values);
      } catch (error) {
        process.stderr.write(
          `${command}: ${(error as Error).message}\nUsage: payment-service admin ${areaCommand.usage}\n`,
        );
        return 2;
      }
    }
  }
  for (const request of requests) {
    if ((await send(base, key, request)) === undefined) return 1;
  }
  return 0;
}

/** Sends one operator API request and prints its answer; its text, or undefined on an error. */
async function send(base: string, key: string, request: CliRequest): Promise<string | undefined> {
  const response = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(request.body !== undefined ? { 'content-type': request.contentType ?? 'application/json' } : {}),
    },
    body:
      request.body === undefined
        ? undefined
        : typeof request.body === 'string'
          ? request.body
          : JSON.stringify(request.body),
  });
  const text = await response.text();
  (response.ok ? process.stdout : process.stderr).write(`${text}\n`);
  return response.ok ? text : undefined;
}

/**
 * Sweeps every sealed value, call after call. Fails when a value could not be opened (its key is not
 * configured) or when the current key changed during the sweep (processes with different keys behind
 * ADMIN_URL): the sweep must then run again once every process holds the new key.
 */
async function resealAll(base: string, key: string, limit: string | undefined): Promise<number> {
  let after: string | null = null;
  let keyId: string | undefined;
  let unreadable = 0;
  do {
    const query = new URLSearchParams({
      ...(limit === undefined ? {} : { limit }),
      ...(after === null ? {} : { after }),
    });
    const text = await send(base, key, { method: 'POST', path: `/admin/v1/secrets/reseal?${query}` });
    if (text === undefined) return 1;
    const result = JSON.parse(text) as ResealResult;
    if (keyId !== undefined && result.key_id !== keyId) {
      process.stderr.write(
        `The current key changed during the sweep (${keyId}, then ${result.key_id}): run reseal-secrets again ` +
          'once every process holds the new SECRETS_ENCRYPTION_KEY\n',
      );
      return 1;
    }
    keyId = result.key_id;
    unreadable += result.unreadable;
    after = result.next;
  } while (after !== null);
  if (unreadable === 0) return 0;
  process.stderr.write(
    `${unreadable} values no configured key opens (their rows are in unreadable_rows above): add their key to ` +
      'SECRETS_ENCRYPTION_KEYS_PREVIOUS and run reseal-secrets again\n',
  );
  return 1;
}
