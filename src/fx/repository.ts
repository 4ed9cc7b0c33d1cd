// SQL of FX rates (D15): rate sets (one base, provider and as_of per import) and their rates. Each
// provider's latest set per base is current (is_current); only current sets are read. Rates come back as
// PostgreSQL numeric text, exactly as stored; the service does the decimal arithmetic.
import type { Queryable } from '../db/pool.ts';

export interface RateSetRow {
  id: number;
  provider: string;
  base_currency: string;
  as_of: Date;
  created_at: Date;
  updated_at: Date;
  /** True when this statement created the set, false when it existed. */
  created: boolean;
  /** The provider's latest set for this base: the one reads use. */
  is_current: boolean;
}

export interface RateSetInput {
  provider: string;
  base: string;
  asOf: Date;
  /** Currency code -> rate per one unit of base, as a decimal string. */
  rates: ReadonlyArray<readonly [string, string]>;
}

/**
 * Records a set: a new one, or, when the provider already has a set for this base and moment, either its
 * rates replaced (`replace`) or the set left as it is (`keep`, for seeds). The set becomes the provider's
 * current set for the base unless that one is later (a back-filled older day is stored, not read).
 * In the caller's transaction.
 */
export async function saveRateSet(
  tx: Queryable,
  input: RateSetInput,
  onConflict: 'replace' | 'keep',
): Promise<{ set: RateSetRow; rates: Record<string, string> }> {
  // Imports of one provider and base take turns, so that exactly one of them ends up current.
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('fx_rate_sets'), hashtext($1 || ' ' || $2))", [
    input.provider,
    input.base,
  ]);
  const upsert = await tx.query<Omit<RateSetRow, 'is_current'>>(
    `INSERT INTO fx_rate_sets (provider, base_currency, as_of) VALUES ($1, $2, $3)
     ON CONFLICT ON CONSTRAINT fx_rate_sets_import_uniq DO UPDATE SET updated_at = ${
       onConflict === 'replace' ? 'now()' : 'fx_rate_sets.updated_at'
     }
     RETURNING id, provider, base_currency, as_of, created_at, updated_at, (xmax = 0) AS created`,
    [input.provider, input.base, input.asOf],
  );
  const inserted = upsert.rows[0]!;
  if (inserted.created || onConflict === 'replace') {
    if (!inserted.created) await tx.query('DELETE FROM fx_rates WHERE rate_set_id = $1', [inserted.id]);
    await tx.query(
      `INSERT INTO fx_rates (rate_set_id, currency, rate)
       SELECT $1, currency, rate::numeric FROM unnest($2::text[], $3::text[]) AS given(currency, rate)`,
      [inserted.id, input.rates.map(([code]) => code), input.rates.map(([, rate]) => rate)],
    );
  }
  // The latest as_of of the provider and base is current (as_of is unique per provider and base). The
  // previous current set is cleared first: the partial unique index admits one current set at a time.
  const latest = await tx.query<{ id: number }>(
    `SELECT id FROM fx_rate_sets WHERE provider = $1 AND base_currency = $2 ORDER BY as_of DESC LIMIT 1`,
    [input.provider, input.base],
  );
  const latestId = latest.rows[0]!.id;
  await tx.query(
    `UPDATE fx_rate_sets SET is_current = false
     WHERE provider = $1 AND base_currency = $2 AND is_current AND id <> $3`,
    [input.provider, input.base, latestId],
  );
  await tx.query('UPDATE fx_rate_sets SET is_current = true WHERE id = $1 AND NOT is_current', [latestId]);
  const isCurrent = latestId === inserted.id;
  const stored = await tx.query<{ currency: string; rate: string }>(
    'SELECT currency, rate::text AS rate FROM fx_rates WHERE rate_set_id = $1 ORDER BY currency',
    [inserted.id],
  );
  return {
    set: { ...inserted, is_current: isCurrent },
    rates: Object.fromEntries(stored.rows.map((row) => [row.currency, row.rate])),
  };
}

export interface PairRow {
  provider: string;
  as_of: Date;
  /** Units of the source currency per one unit of the set's base ("1" when the source is the base). */
  source_rate: string;
  /** Units of the destination currency per one unit of the base. */
  destination_rate: string;
}

/**
 * The freshest current set holding both currencies (as its base or among its rates): latest `as_of`, then
 * the latest import. `source` and `destination` differ.
 */
export async function findPairRate(
  db: Queryable,
  source: string,
  destination: string,
): Promise<PairRow | undefined> {
  const result = await db.query<PairRow>({
    name: 'fx.pair-rate',
    text: `SELECT s.provider, s.as_of,
                  CASE WHEN s.base_currency = $1 THEN '1' ELSE x.rate::text END AS source_rate,
                  CASE WHEN s.base_currency = $2 THEN '1' ELSE y.rate::text END AS destination_rate
           FROM fx_rate_sets s
           LEFT JOIN fx_rates x ON x.rate_set_id = s.id AND x.currency = $1
           LEFT JOIN fx_rates y ON y.rate_set_id = s.id AND y.currency = $2
           WHERE s.is_current
             AND (s.base_currency = $1 OR x.rate IS NOT NULL)
             AND (s.base_currency = $2 OR y.rate IS NOT NULL)
           ORDER BY s.as_of DESC, s.id DESC
           LIMIT 1`,
    values: [source, destination],
  });
  return result.rows[0];
}

export interface RateFromRow extends PairRow {
  destination_currency: string;
}

/**
 * For every currency other than `source` that shares a current set with it: the freshest such set's
 * rates of the two, chosen per currency as findPairRate chooses for one pair.
 */
export async function findRatesFrom(db: Queryable, source: string): Promise<RateFromRow[]> {
  const result = await db.query<RateFromRow>({
    name: 'fx.rates-from',
    text: `WITH holding AS (
             SELECT s.id, s.provider, s.as_of, s.base_currency,
                    CASE WHEN s.base_currency = $1 THEN '1' ELSE x.rate::text END AS source_rate
             FROM fx_rate_sets s
             LEFT JOIN fx_rates x ON x.rate_set_id = s.id AND x.currency = $1
             WHERE s.is_current AND (s.base_currency = $1 OR x.rate IS NOT NULL)
           ), candidates AS (
             SELECT h.id, h.provider, h.as_of, h.source_rate, r.currency, r.rate::text AS rate
             FROM holding h JOIN fx_rates r ON r.rate_set_id = h.id
             UNION ALL
             SELECT h.id, h.provider, h.as_of, h.source_rate, h.base_currency, '1' FROM holding h
           )
           SELECT DISTINCT ON (currency)
                  currency AS destination_currency, provider, as_of, source_rate, rate AS destination_rate
           FROM candidates
           WHERE currency <> $1
           ORDER BY currency, as_of DESC, id DESC`,
    values: [source],
  });
  return result.rows;
}

/** The age of each provider's current set per base (now − as_of), read from the current-set index. */
export async function currentSetAges(
  db: Queryable,
): Promise<{ provider: string; base: string; ageSeconds: number }[]> {
  const result = await db.query<{ provider: string; base: string; ageSeconds: number }>({
    name: 'fx.current-set-ages',
    text: `SELECT provider, base_currency AS base, EXTRACT(EPOCH FROM now() - as_of)::float8 AS "ageSeconds"
           FROM fx_rate_sets WHERE is_current ORDER BY provider, base_currency`,
  });
  return result.rows;
}
