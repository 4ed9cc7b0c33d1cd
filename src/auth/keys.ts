// RS256 signing keys of the built-in issuer (D6): created on first use, kept in storage (private key
// sealed with SECRETS_ENCRYPTION_KEY), rotatable; retired keys stay published until their tokens expire.
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from 'jose';
import { withTransaction } from '../db/pool.ts';
import type { AppDeps } from '../platform/deps.ts';
import * as repository from './repository.ts';

export interface ActiveKey {
  kid: string;
  privateKey: CryptoKey | Uint8Array;
}

export interface Jwks {
  keys: JWK[];
}

// Other processes sharing the database see a rotation within this time; the retired key stays
// published far longer (token TTL + 60 s), so a token signed meanwhile still verifies everywhere.
const CACHE_MS = 5_000;
// An unknown `kid` reloads the key set at most this often, so forged tokens cannot flood storage.
const UNKNOWN_KID_RELOAD_MS = 1_000;
// Grace beyond the token TTL before a retired key leaves the JWKS (clock skew, in-flight requests).
const RETIRED_GRACE_MS = 60_000;

const stores = new WeakMap<AppDeps, KeyStore>();

/** One key store per process (per deps), so that the token endpoint, the bearer hook and the
 *  rotation command share caches: after a rotation the next token carries the new kid. */
export function keyStoreFor(deps: AppDeps): KeyStore {
  let store = stores.get(deps);
  if (!store) {
    store = new KeyStore(deps);
    stores.set(deps, store);
  }
  return store;
}

export class KeyStore {
  readonly #deps: AppDeps;
  #active: { key: ActiveKey; loadedAt: number } | undefined;
  #jwks: { jwks: Jwks; kids: Set<string>; loadedAt: number } | undefined;

  constructor(deps: AppDeps) {
    this.#deps = deps;
  }

  get realm(): string {
    return this.#deps.config.authRealm;
  }

  /** The key that signs new tokens; created when the realm has none. */
  async signingKey(): Promise<ActiveKey> {
    if (this.#active && Date.now() - this.#active.loadedAt < CACHE_MS) return this.#active.key;
    let row = await repository.findSigningKey(this.#deps.pool, this.realm);
    if (!row) row = await this.#create(false);
    const privateJwk = JSON.parse(this.#deps.secretBox.decrypt(row.private_key_sealed)) as JWK;
    const key = { kid: row.kid, privateKey: await importJWK(privateJwk, 'RS256') };
    this.#active = { key, loadedAt: Date.now() };
    return key;
  }

  /**
   * Public keys to publish at the JWKS endpoint. Always contains the key this process signs with,
   * so a token it issues is never ahead of the key set it publishes. `kid`: a key id the caller
   * could not find; the set is reloaded for it (rate-limited) instead of waiting for the cache.
   */
  async jwks(kid?: string): Promise<Jwks> {
    const active = await this.signingKey();
    const cached = this.#jwks;
    const now = Date.now();
    const fresh =
      cached !== undefined &&
      now - cached.loadedAt < CACHE_MS &&
      cached.kids.has(active.kid) &&
      (kid === undefined || cached.kids.has(kid) || now - cached.loadedAt < UNKNOWN_KID_RELOAD_MS);
    if (fresh) return cached.jwks;
    const retiredSince = new Date(now - this.#deps.config.tokenTtlSeconds * 1000 - RETIRED_GRACE_MS);
    const rows = await repository.listPublishedKeys(this.#deps.pool, this.realm, retiredSince);
    const keys = rows.map((row) => ({ ...(row.public_jwk as JWK), kid: row.kid, use: 'sig', alg: 'RS256' }));
    const jwks = { keys };
    this.#jwks = { jwks, kids: new Set(rows.map((row) => row.kid)), loadedAt: now };
    return jwks;
  }

  /** Operator command: a new key signs from now on; the old one stays published until its tokens expire. */
  async rotate(): Promise<string> {
    const row = await this.#create(true);
    this.#active = undefined;
    this.#jwks = undefined;
    return row.kid;
  }

  async #create(retireOthers: boolean): Promise<repository.SigningKeyRow> {
    return withTransaction(this.#deps.pool, async (tx) => {
      await repository.lockRealmKeys(tx, this.realm);
      if (!retireOthers) {
        const existing = await repository.findSigningKey(tx, this.realm);
        if (existing) return existing;
      } else {
        await repository.retireSigningKeys(tx, this.realm);
      }
      const { publicKey, privateKey } = await generateKeyPair('RS256', {
        extractable: true,
        modulusLength: 2048,
      });
      const publicJwk = await exportJWK(publicKey);
      // kid = RFC 7638 thumbprint of the public key.
      const kid = await calculateJwkThumbprint(publicJwk);
      const sealed = this.#deps.secretBox.encrypt(JSON.stringify(await exportJWK(privateKey)));
      await repository.insertSigningKey(tx, {
        kid,
        realm: this.realm,
        public_jwk: publicJwk,
        private_key_sealed: sealed,
      });
      const created = await repository.findSigningKey(tx, this.realm);
      return created!;
    });
  }
}
