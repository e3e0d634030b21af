/**
 * Where a webhook may be sent (docs/webhooks.md, "Addresses"): checked on the addresses a name
 * resolves to, at creation and again at each delivery, where the connection goes to the address
 * checked (`checkedLookup`), so that a name resolving elsewhere the second time (DNS rebinding)
 * reaches nothing it should not.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

function blockList(v4: string[], v6: string[]): BlockList {
  const list = new BlockList();
  for (const s of v4) list.addSubnet(s.split('/')[0]!, Number(s.split('/')[1]), 'ipv4');
  for (const s of v6) list.addSubnet(s.split('/')[0]!, Number(s.split('/')[1]), 'ipv6');
  return list;
}

/** Link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254), unspecified, Alibaba's metadata: refused always. */
const NEVER = blockList(['169.254.0.0/16', '0.0.0.0/8', '100.100.100.200/32'], ['fe80::/10', '::/128', 'fd00:ec2::254/128']);
/** Loopback, private, carrier-grade NAT: refused unless WEBHOOK_ALLOW_PRIVATE. */
const PRIVATE = blockList(['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'], ['::1/128', 'fc00::/7']);

/** Why `address` is refused (`is a …`), or null. An IPv4 address mapped into IPv6 is checked as IPv4. */
export function refusal(address: string, allowPrivate: boolean): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const ip = mapped ?? address;
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  if (NEVER.check(ip, family)) return "is a link-local, unspecified or metadata address, never a webhook's";
  if (!allowPrivate && PRIVATE.check(ip, family)) return 'is a loopback or private address (allowed only with WEBHOOK_ALLOW_PRIVATE=true)';
  return null;
}

/** The addresses of `host` (an IP literal is its own), every one allowed; throws one sentence otherwise. */
export async function resolveAllowed(host: string, allowPrivate: boolean): Promise<{ address: string; family: number }[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (isIP(bare)) {
    const why = refusal(bare, allowPrivate);
    if (why) throw new Error(`${bare} ${why}`);
    return [{ address: bare, family: isIP(bare) }];
  }
  try {
    addresses = await lookup(bare, { all: true });
  } catch (err) {
    throw new Error(`${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'no address'})`);
  }
  for (const a of addresses) {
    const why = refusal(a.address, allowPrivate);
    if (why) throw new Error(`${host} resolves to ${a.address}, which ${why}`);
  }
  return addresses;
}

/** Why `url` cannot be a webhook's, or null: the scheme, then every address its host resolves to. */
export async function urlRefusal(url: string, allowPrivate: boolean): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `must use http or https, not ${parsed.protocol.slice(0, -1)}`;
  try {
    await resolveAllowed(parsed.hostname, allowPrivate);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A `lookup` for node:http that resolves once and answers only allowed addresses: the connection goes where the check looked. */
export function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolveAllowed(hostname, allowPrivate).then(
      (addresses) => {
        const wanted = options.family ? addresses.filter((a) => a.family === options.family) : addresses;
        if (options.all) (callback as (e: null, a: typeof addresses) => void)(null, wanted);
        else if (wanted[0]) callback(null, wanted[0].address, wanted[0].family);
        else callback(Object.assign(new Error(`${hostname} has no address of family ${options.family}`), { code: 'ENOTFOUND' }), '', 0);
      },
      (err: Error) => callback(Object.assign(err, { code: 'EADDRNOTALLOWED' }), '', 0),
    );
  };
}
