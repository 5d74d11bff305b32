import { isIPv4, isIPv6 } from 'node:net';

/**
 * Whether an address `rerun ui` may listen on reaches this machine only: `localhost`, 127.0.0.0/8,
 * `::1` (in any spelling), or `::ffff:127.x.y.z`. Anything else (0.0.0.0, a LAN address, a host
 * name) lets other machines connect, over plain HTTP.
 *
 * @example
 * isLoopbackAddress('127.0.0.2'); // true
 * isLoopbackAddress('0.0.0.0'); // false
 */
export function isLoopbackAddress(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  if (isIPv4(bare)) return bare.startsWith('127.');
  if (!isIPv6(bare)) return false;
  const lower = bare.toLowerCase();
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped?.[1] !== undefined) return isIPv4(mapped[1]) && mapped[1].startsWith('127.');
  // ::1 however it is written: seven zero groups then 1.
  const groups = lower.includes('::') ? expand(lower) : lower.split(':').map((group) => Number.parseInt(group, 16));
  return groups.length === 8 && groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1;
}

function expand(address: string): number[] {
  const [head = '', tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const zeros = new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => Number.parseInt(group, 16));
}
