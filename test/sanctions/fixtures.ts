// Fixtures of the sanctions tests: the committed list files (OFAC SDN CSV and OpenSanctions
// targets.simple.csv, in the publishers' layouts, with invented entries) and helpers over the operator API.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LightMyRequestResponse } from 'fastify';
import { TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';

export const FIXTURES = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'sanctions',
);
export const OFAC_DIR = path.join(FIXTURES, 'ofac');
export const OPENSANCTIONS_FILE = path.join(FIXTURES, 'opensanctions', 'targets.simple.csv');

/**
 * A release with OFAC's spillover file: the Remarks of 1101 and 1102 are cut at 1000 characters (1101's
 * inside `DOB`, 1102's after the space in `DOB 03 Sep `) and continue in sdn_comments.csv, which also holds
 * a record of 1199, an ent_num sdn.csv does not hold.
 */
export const OFAC_SPILLOVER_DIR = path.join(FIXTURES, 'ofac-spillover');

export function ofacFiles(): { 'sdn.csv': string; 'alt.csv': string; 'add.csv': string } {
  const read = (name: string) => readFileSync(path.join(OFAC_DIR, name), 'utf8');
  return { 'sdn.csv': read('sdn.csv'), 'alt.csv': read('alt.csv'), 'add.csv': read('add.csv') };
}

export function ofacSpilloverFiles(): {
  'sdn.csv': string;
  'alt.csv': string;
  'add.csv': string;
  'sdn_comments.csv': string;
} {
  const read = (name: string) => readFileSync(path.join(OFAC_SPILLOVER_DIR, name), 'utf8');
  return {
    'sdn.csv': read('sdn.csv'),
    'alt.csv': read('alt.csv'),
    'add.csv': read('add.csv'),
    'sdn_comments.csv': read('sdn_comments.csv'),
  };
}

export const openSanctionsText = (): string => readFileSync(OPENSANCTIONS_FILE, 'utf8');

export const SCREENINGS = '/api/v1/sanctions/screenings';
export const LISTS = '/api/v1/sanctions/lists';

export function admin(
  t: TestApp,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${TEST_ADMIN_KEY}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

/** Imports a list through the operator API and returns what it answered. */
export function importList(
  t: TestApp,
  code: string,
  body: { format: string; name?: string; files: Record<string, string> },
): Promise<LightMyRequestResponse> {
  return admin(t, 'POST', `/admin/v1/sanctions/lists/${code}/import`, body);
}

export async function importFixtures(t: TestApp): Promise<void> {
  const ofac = await importList(t, 'ofac-sdn', { format: 'ofac-sdn-csv', files: ofacFiles() });
  assert.equal(ofac.statusCode, 200, ofac.body);
  const open = await importList(t, 'opensanctions', {
    format: 'opensanctions-csv',
    files: { 'targets.simple.csv': openSanctionsText() },
  });
  assert.equal(open.statusCode, 200, open.body);
}

export interface HitJson {
  list: string;
  entry_id: string;
  matched_name: string;
  score: string;
  entity_type: string;
  programs: string[];
  countries: string[];
}

export interface ScreeningJson {
  id: string;
  entity_type: string;
  name: string;
  date_of_birth: string | null;
  country: string | null;
  match_status: string;
  hits: HitJson[];
  threshold: string;
  lists_version: string;
  source_object_type: string | null;
  source_object_id: string | null;
  external_id: string | null;
  reviewed_at: string | null;
  review_note: string | null;
  created_at: string;
  updated_at: string;
}
