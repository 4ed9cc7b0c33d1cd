-- The bank directory (D17): banks and their branches, shared reference data of every organisation.
-- Free-text search ("name or BIC", "name, city or code": case-insensitive substrings) is served by trigram
-- GIN indexes (pg_trgm, a trusted contrib extension on PostgreSQL 13+, shipped by embedded-postgres too).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE banks (
  id text PRIMARY KEY,                       -- bnk_ + ULID (D14)
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  country text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
  bic text CHECK (bic ~ '^[A-Z]{6}[A-Z0-9]{2}$'),           -- BIC8 (institution, country, location)
  national_code_type text
    CHECK (national_code_type IN ('blz', 'sort_code', 'aba', 'ifsc', 'clabe', 'nuban', 'fr_bank', 'es_bank')),
  national_code text CHECK (national_code ~ '^[A-Z0-9]{1,16}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((national_code_type IS NULL) = (national_code IS NULL)),
  -- A bank is found again by one of its codes (the import upserts by them).
  CHECK (bic IS NOT NULL OR national_code IS NOT NULL)
);
CREATE UNIQUE INDEX banks_bic_uniq ON banks (bic);
CREATE UNIQUE INDEX banks_national_code_uniq ON banks (country, national_code_type, national_code);
-- The IBAN look-up asks for a country's national bank code whatever its type; the filter has no country.
CREATE INDEX banks_national_code_idx ON banks (national_code);
CREATE INDEX banks_created_idx ON banks (created_at);
CREATE INDEX banks_updated_idx ON banks (updated_at);
CREATE INDEX banks_name_trgm_idx ON banks USING gin (name gin_trgm_ops);
CREATE INDEX banks_bic_trgm_idx ON banks USING gin (bic gin_trgm_ops);

CREATE TABLE bank_branches (
  id text PRIMARY KEY,                       -- brn_ + ULID (D14)
  bank_id text NOT NULL REFERENCES banks(id),
  name text CHECK (length(name) BETWEEN 1 AND 200),
  country text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
  city text CHECK (length(city) BETWEEN 1 AND 100),
  address text CHECK (length(address) BETWEEN 1 AND 500),
  bic text CHECK (bic ~ '^[A-Z]{6}[A-Z0-9]{5}$'),          -- BIC11
  code_type text CHECK (code_type IN ('blz', 'sort_code', 'aba', 'ifsc')),
  code text CHECK (code ~ '^[A-Z0-9]{1,16}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- What free text searches (name, city or code), lower-cased, the fields parted by a unit separator so
  -- that no match spans two of them: one trigram index and one LIKE per row, instead of three of each.
  search_text text NOT NULL GENERATED ALWAYS AS (
    lower(coalesce(name, '') || chr(31) || coalesce(city, '') || chr(31) || coalesce(code, ''))
  ) STORED,
  CHECK ((code_type IS NULL) = (code IS NULL)),
  CHECK (bic IS NOT NULL OR code IS NOT NULL)
);
CREATE UNIQUE INDEX bank_branches_bic_uniq ON bank_branches (bic);
CREATE UNIQUE INDEX bank_branches_code_uniq ON bank_branches (country, code_type, code);
CREATE INDEX bank_branches_code_idx ON bank_branches (code);
CREATE INDEX bank_branches_bank_idx ON bank_branches (bank_id, id);
CREATE INDEX bank_branches_city_idx ON bank_branches (lower(city));
CREATE INDEX bank_branches_created_idx ON bank_branches (created_at);
CREATE INDEX bank_branches_updated_idx ON bank_branches (updated_at);
CREATE INDEX bank_branches_search_trgm_idx ON bank_branches USING gin (search_text gin_trgm_ops);
