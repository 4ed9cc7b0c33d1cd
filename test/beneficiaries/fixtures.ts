// Fixtures of the beneficiaries tests: the valid create bodies of bodies.ts, and helpers over the API.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { errorBody } from '../helpers/app.ts';
import type { ApiClient } from '../helpers/http.ts';

export const BENEFICIARIES = '/api/v1/beneficiaries';
export const REQUIREMENTS = `${BENEFICIARIES}/requirements`;

export interface BeneficiaryJson {
  id: string;
  status: string;
  entity_type: string;
  name: string;
  destination_country: string;
  destination_currency: string;
  payout_method: string;
  address: { line1: string; city: string; postal_code: string | null; country: string };
  email: string | null;
  date_of_birth: string | null;
  account: Record<string, string>;
  bank: { id: string; name: string; bic: string | null } | null;
  screening_id: string;
  external_id: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export { bodyOf, type FieldSetKey, VALID } from './bodies.ts';

export async function createBeneficiary(
  api: ApiClient,
  body: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<BeneficiaryJson> {
  const response = await api.post(BENEFICIARIES, body, headers);
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as BeneficiaryJson;
}

export function expectError(
  response: LightMyRequestResponse,
  status: number,
  code: string,
  field?: string,
): string {
  assert.equal(response.statusCode, status, response.body);
  const body = errorBody(response.body);
  assert.equal(body.code, code, response.body);
  assert.equal(body.field, field, `field of ${response.body}`);
  return body.error;
}
