// SSRF guard (D10): a webhook destination is resolved once, refused if ANY of its addresses is not a
// public unicast address, and the connection then dials the checked address (no second resolution that
// a hostile DNS server could answer differently: DNS rebinding).
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to every address (injectable so tests can simulate DNS answers). */
export type LookupFunction = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: LookupFunction = async (hostname) => {
  const results = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return results.map((result) => ({ address: result.address, family: result.family === 6 ? 6 : 4 }));
};

/** A destination refused by the SSRF rules; recorded as a `failed` attempt without a status code. */
export class BlockedDestinationError extends Error {
  readonly code = 'ERR_BLOCKED_DESTINATION';
}

/**
 * Why an address may not be dialled, or undefined when it is a public unicast address.
 * ipaddr.js names every special-purpose range (loopback, private, linkLocal, carrierGradeNat, multicast,
 * reserved, unspecified, broadcast, uniqueLocal, ipv4Mapped, 6to4, teredo, ...): anything but `unicast`
 * is refused. IPv4-mapped IPv6 (::ffff:a.b.c.d) is refused outright, whatever the IPv4 inside, because
 * some stacks route it to the embedded IPv4 address.
 */
export function blockedRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'invalid';
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated): ipaddr.js calls the canonical form (::7f00:1) unicast,
  // but some stacks route it to the embedded IPv4 address. Refuse every such address in ::/96.
  if (
    range === 'unicast' &&
    parsed.kind() === 'ipv6' &&
    (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)
  ) {
    return 'ipv4Compatible';
  }
  return range === 'unicast' ? undefined : range;
}

// How refusals name the ranges ipaddr.js reports (`a ipv4Mapped address` reads as a bug to a user).
const RANGE_DESCRIPTIONS: Record<string, string> = {
  invalid: 'not a valid IP address',
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (CGNAT) address',
  private: 'a private address',
  reserved: 'a reserved address',
  uniqueLocal: 'a unique local address',
  ipv4Mapped: 'an IPv4-mapped address',
  ipv4Compatible: 'an IPv4-compatible address',
  deprecatedSiteLocal: 'a site-local address',
  discard: 'a discard-only address',
  rfc6145: 'an IPv4-translated address',
  rfc6052: 'a NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
  benchmarking: 'a benchmarking address',
  amt: 'an AMT relay address',
  as112: 'an AS112 address',
  as112v6: 'an AS112 address',
  deprecatedOrchid: 'an ORCHID address',
  orchid2: 'an ORCHID address',
  droneRemoteIdProtocolEntityTags: 'a drone remote ID address',
  segmentRouting: 'a segment routing (SRv6) address',
};

/** `a loopback address`, `an IPv4-mapped address`: a range of blockedRange() as a refusal says it. */
export function describeRange(range: string): string {
  return RANGE_DESCRIPTIONS[range] ?? `a special-purpose address (${range})`;
}

/**
 * Why a URL host that is an IP literal may never be sent to (`127.0.0.1 is a loopback address`), or
 * undefined for a public address or a host name. `hostname` is as the URL parser gives it (IPv6 in
 * brackets). A name is only refused when it is resolved, at each attempt, since DNS may change.
 */
export function refusedLiteral(hostname: string): string | undefined {
  const address = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(address) === 0) return undefined;
  const range = blockedRange(address);
  return range === undefined ? undefined : `${address} is ${describeRange(range)}`;
}

/**
 * The addresses to dial for `hostname` (an IP literal or a name), all of them checked.
 * Throws BlockedDestinationError when any address is refused, or the DNS error when resolution fails.
 */
export async function resolveDestination(
  hostname: string,
  options: { lookup: LookupFunction; allowPrivate: boolean },
): Promise<ResolvedAddress[]> {
  const literal = isIP(hostname);
  const addresses: ResolvedAddress[] =
    literal !== 0 ? [{ address: hostname, family: literal === 6 ? 6 : 4 }] : await options.lookup(hostname);
  if (addresses.length === 0) throw new Error(`DNS lookup of ${hostname} returned no address`);
  if (options.allowPrivate) return addresses;
  for (const { address } of addresses) {
    const range = blockedRange(address);
    if (range !== undefined) {
      throw new BlockedDestinationError(
        literal !== 0
          ? `destination refused: ${address} is ${describeRange(range)}`
          : `destination refused: ${hostname} resolves to ${address}, ${describeRange(range)}`,
      );
    }
  }
  return addresses;
}
