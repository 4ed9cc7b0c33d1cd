// Static operator credentials (ADMIN_API_KEY, METRICS_TOKEN) presented as `Authorization: Bearer <key>`.
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Whether the Authorization header presents `key` as a Bearer credential. Both sides are compared as
 * SHA-256 digests in constant time, so neither the key's content nor its length shows in the timing.
 */
export function bearerKeyMatches(header: string | undefined, key: string): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  return timingSafeEqual(digest(header.slice(7)), digest(key));
}
