import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
before(async () => { t = await startTestApp(); });
after(async () => { await t.close(); });

test('scope matrix', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as any;
  const scopes = [...t.deps.catalogue.scopes];
  console.log('SCOPES', scopes.join(' '));
  const tenants: Record<string, any> = {};
  for (const s of scopes) tenants[s] = await t.tenant([s]);
  const out: string[] = [];
  for (const [p, ops] of Object.entries<any>(doc.paths)) {
    if (!p.startsWith('/api/v1')) continue;
    for (const method of Object.keys(ops)) {
      if (!['get', 'post', 'patch', 'delete', 'put'].includes(method)) continue;
      const url = p.replace(/\{[^}]+\}/g, 'x_01JAAAAAAAAAAAAAAAAAAAAAAA');
      const ok: string[] = [];
      for (const s of scopes) {
        const r = await t.app.inject({ method: method.toUpperCase() as any, url, headers: { ...tenants[s].auth, 'content-type': 'application/json' }, payload: method === 'get' || method === 'delete' ? undefined : '{}' });
        if (r.statusCode !== 403) ok.push(`${s}(${r.statusCode})`);
      }
      // also unauthenticated
      const u = await t.app.inject({ method: method.toUpperCase() as any, url });
      out.push(`${method.toUpperCase()} ${p} -> ${ok.join(',')} unauth=${u.statusCode}`);
    }
  }
  console.log(out.join('\n'));
});
