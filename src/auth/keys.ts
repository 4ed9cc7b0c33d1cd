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

const CACHE_MS = 5_000;

export class KeyStore {
  readonly #deps: AppDeps;
  #active: { key: ActiveKey; loadedAt: number } | undefined;
  #jwks: { keys: JWK[]; loadedAt: number } | undefined;

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

  /** Public keys to publish at the JWKS endpoint. */
  async jwks(): Promise<{ keys: JWK[] }> {
    if (this.#jwks && Date.now() - this.#jwks.loadedAt < CACHE_MS) return { keys: this.#jwks.keys };
    await this.signingKey();
    const retiredSince = new Date(Date.now() - this.#deps.config.tokenTtlSeconds * 1000 - 60_000);
    const rows = await repository.listPublishedKeys(this.#deps.pool, this.realm, retiredSince);
    const keys = rows.map((row) => ({ ...(row.public_jwk as JWK), kid: row.kid, use: 'sig', alg: 'RS256' }));
    this.#jwks = { keys, loadedAt: Date.now() };
    return { keys };
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
