-- Crypto deposit addresses (D22): derived from the operator's account public keys, one new index per
-- address.

-- One row per account key ever used, in its canonical xpub form (the same key written as a zpub or
-- an xpub is one row). `next_index` is the key's next unused index of its external chain: creating an
-- address increments it in the creating transaction, so the row lock orders concurrent creates of every
-- API process, an index is never handed out twice, and a rolled-back create gives its index back (the
-- sequence has no gaps, which wallets scanning with a gap limit rely on).
CREATE TABLE crypto_account_keys (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  family text NOT NULL CHECK (family IN ('evm', 'tron', 'bitcoin')),
  canonical_key text NOT NULL,
  account_path text NOT NULL,
  -- BIP32 public derivation stops at 2^31 - 1 (higher indexes are hardened).
  next_index bigint NOT NULL DEFAULT 0 CHECK (next_index BETWEEN 0 AND 2147483648),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (family, canonical_key)
);

CREATE TABLE crypto_deposit_addresses (
  id text PRIMARY KEY CHECK (id ~ '^dad_[0-9A-HJKMNP-TV-Z]{26}$'),
  organisation_id uuid NOT NULL REFERENCES organisations(id),
  network text NOT NULL CHECK (network IN ('bitcoin', 'ethereum', 'polygon', 'tron')),
  family text NOT NULL CHECK (family IN ('evm', 'tron', 'bitcoin')),
  asset text NOT NULL CHECK (asset IN ('BTC', 'USDC', 'USDT')),
  -- As shown (EIP-55 mixed case for EVM); `address_lookup` is the form inbound notifications are matched
  -- in: lower case for EVM hex and bech32, as is for Tron's case-sensitive base58.
  address text NOT NULL,
  address_lookup text NOT NULL,
  account_key_id bigint NOT NULL REFERENCES crypto_account_keys(id),
  derivation_index bigint NOT NULL CHECK (derivation_index BETWEEN 0 AND 2147483647),
  derivation_path text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  label text,
  external_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  disabled_at timestamptz,
  CHECK ((status = 'disabled') = (disabled_at IS NOT NULL)),
  -- Never reused: one address per index of a key, and one record per address of a family.
  UNIQUE (account_key_id, derivation_index),
  UNIQUE (family, address_lookup)
);
CREATE UNIQUE INDEX crypto_deposit_addresses_external_id_uniq
  ON crypto_deposit_addresses (organisation_id, external_id) WHERE external_id IS NOT NULL;
-- Searches (D4) of one organisation, by id or by time.
CREATE INDEX crypto_deposit_addresses_org_id_idx ON crypto_deposit_addresses (organisation_id, id);
CREATE INDEX crypto_deposit_addresses_org_created_idx ON crypto_deposit_addresses (organisation_id, created_at);
CREATE INDEX crypto_deposit_addresses_org_updated_idx ON crypto_deposit_addresses (organisation_id, updated_at);
