// The README's promise, as a whole process (D1, D2): `serve` on the embedded PostgreSQL becomes ready,
// prints the sandbox credentials, keeps its data across restarts, refuses a second owner of DATA_DIR,
// and on SIGINT / SIGTERM drains and exits 0 with no PostgreSQL process left behind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runToExit, type ServiceProcess, startService } from '../helpers/process.ts';

const ADMIN_KEY = 'e2e-admin-key-0123456789abcdef';

function postgresProcessesFor(dataDir: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', `postgres.*${dataDir}`], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe('serve on the embedded PostgreSQL (D1, D2)', () => {
  let dataDir: string;
  let env: Record<string, string>;
  before(async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'payment-service-e2e-'));
    await chmod(parent, 0o755);
    dataDir = path.join(parent, 'data');
    env = { DATA_DIR: dataDir, ADMIN_API_KEY: ADMIN_KEY, APP_ENV: 'sandbox' };
  });
  after(async () => {
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  let organisationId: string;

  it('starts, is ready, prints the sandbox credentials, and stops cleanly on SIGINT', async () => {
    const service: ServiceProcess = await startService('serve', env);
    try {
      const ready = await fetch(`${service.baseUrl}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready' });
      assert.match(service.stdout(), /client_id\s+: sandbox-client/);
      assert.match(service.stdout(), /client_secret\s+: sandbox-secret/);

      const token = await fetch(`${service.baseUrl}/realms/sandbox/protocol/openid-connect/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: 'sandbox-client',
          client_secret: 'sandbox-secret',
        }),
      });
      assert.equal(token.status, 200);

      const created = await fetch(`${service.baseUrl}/admin/v1/organisations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Persisted Ltd' }),
      });
      assert.equal(created.status, 201);
      organisationId = ((await created.json()) as { id: string }).id;
      assert.ok(postgresProcessesFor(dataDir).length > 0, 'the embedded server runs while serving');
    } finally {
      assert.equal(await service.stop('SIGINT'), 0);
    }
    assert.deepEqual(postgresProcessesFor(dataDir), [], 'no PostgreSQL process is left behind');
  });

  it('keeps the data on a second start, refuses a second process on the same DATA_DIR, exits 0 on SIGTERM', async () => {
    const service = await startService('serve', env);
    try {
      const client = await fetch(`${service.baseUrl}/admin/v1/clients`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ organisation_id: organisationId }),
      });
      assert.equal(client.status, 201, 'the organisation created before the restart still exists');

      const cli = await runToExit('admin', {
        ...env,
        ADMIN_URL: service.baseUrl,
      }).catch((error: unknown) => ({ code: -1, stdout: '', stderr: String(error) }));
      assert.equal(cli.code, 2, 'admin without a command prints usage and exits 2');
      assert.match(cli.stdout, /create-organisation --name/);

      const second = await runToExit('serve', env);
      assert.equal(second.code, 1);
      assert.match(second.stderr, /DATA_DIR .* is in use by another payment-service process \(pid \d+\)/);
    } finally {
      assert.equal(await service.stop('SIGTERM'), 0);
    }
    assert.deepEqual(postgresProcessesFor(dataDir), []);
  });

  it('applies migrations and exits 0 with the migrate role', async () => {
    const result = await runToExit('migrate', env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /migrations are up to date/);
    assert.deepEqual(postgresProcessesFor(dataDir), []);
  });

  it('rejects an unknown role with usage and exit code 2', async () => {
    const result = await runToExit('dance', env);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /Usage: payment-service \[serve\|api\|auth\|worker\|migrate\|admin\]/);
  });
});

describe('admin CLI (D7)', () => {
  it('creates an organisation and a client through the operator API of a running process', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'payment-service-cli-'));
    await chmod(parent, 0o755);
    const env = { DATA_DIR: path.join(parent, 'data'), ADMIN_API_KEY: ADMIN_KEY };
    const service = await startService('serve', env);
    try {
      const { spawnSync } = await import('node:child_process');
      const cli = (args: string[]) =>
        spawnSync(process.execPath, ['src/main.ts', 'admin', ...args, '--url', service.baseUrl], {
          env: { ...process.env, ADMIN_API_KEY: ADMIN_KEY },
          encoding: 'utf8',
        });
      const organisation = cli(['create-organisation', '--name', 'CLI Ltd']);
      assert.equal(organisation.status, 0, organisation.stderr);
      const { id } = JSON.parse(organisation.stdout) as { id: string };
      const client = cli(['create-client', '--organisation-id', id, '--scopes', 'webhooks:read']);
      assert.equal(client.status, 0, client.stderr);
      const created = JSON.parse(client.stdout) as {
        client_id: string;
        scopes: string[];
        client_secret: string;
      };
      assert.deepEqual(created.scopes, ['webhooks:read']);
      const removed = cli(['delete-client', created.client_id]);
      assert.equal(removed.status, 0, removed.stderr);
      const missing = cli(['delete-client', `${created.client_id}x`]);
      assert.equal(missing.status, 1);
      assert.match(missing.stderr, /NOT_FOUND/);
    } finally {
      assert.equal(await service.stop('SIGTERM'), 0);
      await rm(parent, { recursive: true, force: true });
    }
  });
});
