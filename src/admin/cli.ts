// `payment-service admin ...`: wraps the operator API (D7) for operators.
import { parseArgs } from 'node:util';

const USAGE = `Usage: payment-service admin <command> [options]

Commands:
  create-organisation --name <name>
  create-client --organisation-id <uuid> [--scopes webhooks:read,webhooks:write] [--name <name>]
  delete-client <client_id>
  rotate-signing-key

Options:
  --url <base>   operator API base (default: ADMIN_URL, else http://127.0.0.1:$PORT)
Environment: ADMIN_API_KEY (required), ADMIN_URL, PORT`;

export async function runAdminCli(argv: string[], env = process.env): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'organisation-id': { type: 'string' },
      scopes: { type: 'string' },
      url: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
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
  let request: { method: string; path: string; body?: unknown };
  switch (command) {
    case 'create-organisation':
      request = { method: 'POST', path: '/admin/v1/organisations', body: { name: values.name } };
      break;
    case 'create-client':
      request = {
        method: 'POST',
        path: '/admin/v1/clients',
        body: {
          organisation_id: values['organisation-id'],
          ...(values.scopes ? { scopes: values.scopes.split(',').map((scope) => scope.trim()) } : {}),
          ...(values.name ? { name: values.name } : {}),
        },
      };
      break;
    case 'delete-client':
      if (!argument) {
        process.stderr.write('delete-client needs a client_id\n');
        return 2;
      }
      request = { method: 'DELETE', path: `/admin/v1/clients/${encodeURIComponent(argument)}` };
      break;
    case 'rotate-signing-key':
      request = { method: 'POST', path: '/admin/v1/signing-keys/rotate' };
      break;
    default:
      process.stderr.write(`Unknown admin command "${command}"\n${USAGE}\n`);
      return 2;
  }
  const response = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: request.body !== undefined ? JSON.stringify(request.body) : undefined,
  });
  const text = await response.text();
  (response.ok ? process.stdout : process.stderr).write(`${text}\n`);
  return response.ok ? 0 : 1;
}
