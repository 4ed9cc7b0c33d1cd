// SQL of the operator API: organisations.
import type { Queryable } from '../db/pool.ts';

export interface OrganisationRow {
  id: string;
  name: string;
  created_at: Date;
}

export async function insertOrganisation(db: Queryable, id: string, name: string): Promise<OrganisationRow> {
  const result = await db.query<OrganisationRow>(
    'INSERT INTO organisations (id, name) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = organisations.name RETURNING *',
    [id, name],
  );
  return result.rows[0]!;
}

export async function findOrganisation(db: Queryable, id: string): Promise<OrganisationRow | undefined> {
  const result = await db.query<OrganisationRow>('SELECT * FROM organisations WHERE id = $1', [id]);
  return result.rows[0];
}
