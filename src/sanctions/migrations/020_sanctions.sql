-- Sanctions screening (D18): the lists operators import, their entries, and the screenings of names.

-- One row per list; `version` goes up by one with every import, which replaces the list's entries in
-- the same transaction. API processes compare the versions with those of their in-memory match index.
CREATE TABLE sanctions_lists (
  code text PRIMARY KEY CHECK (code ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  format text NOT NULL CHECK (format IN ('ofac-sdn-csv', 'opensanctions-csv', 'sandbox')),
  version integer NOT NULL CHECK (version >= 1),
  entries integer NOT NULL CHECK (entries >= 0),
  aliases integer NOT NULL CHECK (aliases >= 0),
  imported_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sanctions_entries (
  list_code text NOT NULL REFERENCES sanctions_lists (code),
  entry_id text NOT NULL,
  entity_type text NOT NULL
    CHECK (entity_type IN ('individual', 'organisation', 'vessel', 'aircraft', 'unknown')),
  name text NOT NULL,
  aliases text[] NOT NULL,
  programs text[] NOT NULL,
  countries text[] NOT NULL,
  -- ISO 8601 intervals YYYY-MM-DD/YYYY-MM-DD (a year of birth is its whole year).
  birth_dates text[] NOT NULL,
  PRIMARY KEY (list_code, entry_id)
);

CREATE TABLE sanctions_screenings (
  id text PRIMARY KEY,
  organisation_id uuid NOT NULL REFERENCES organisations (id),
  entity_type text NOT NULL CHECK (entity_type IN ('individual', 'organisation')),
  name text NOT NULL,
  date_of_birth date,
  country text,
  match_status text NOT NULL
    CHECK (match_status IN ('no_match', 'potential_match', 'confirmed_match', 'cleared')),
  -- The hits as the screening found them: a later import does not change a screening.
  hits jsonb NOT NULL,
  threshold numeric(3, 2) NOT NULL,
  lists_version text NOT NULL,
  source_object_type text,
  source_object_id text,
  external_id text,
  reviewed_at timestamptz,
  review_note text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- D14: external_id is unique per organisation and resource type.
CREATE UNIQUE INDEX sanctions_screenings_external_id_uniq
  ON sanctions_screenings (organisation_id, external_id) WHERE external_id IS NOT NULL;
-- Searches of one organisation (every search filters by it; pages sort by id or a timestamp).
CREATE INDEX sanctions_screenings_organisation_id ON sanctions_screenings (organisation_id, id);
CREATE INDEX sanctions_screenings_source
  ON sanctions_screenings (organisation_id, source_object_type, source_object_id)
  WHERE source_object_id IS NOT NULL;
CREATE INDEX sanctions_screenings_review
  ON sanctions_screenings (organisation_id, match_status, id);
