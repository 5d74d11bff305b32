import { describe, expect, it } from 'vitest';
import { isLoopbackAddress } from '../../app/ui/listenAddress.js';

describe('isLoopbackAddress', () => {
  it('counts localhost, 127.0.0.0/8 and ::1 in any spelling as this machine only', () => {
    for (const host of [
      'localhost',
      'LOCALHOST',
      '127.0.0.1',
      '127.0.0.2',
      '127.255.0.9',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
    ]) {
      expect(isLoopbackAddress(host), host).toBe(true);
    }
  });

  it('counts every other address or name as reachable from other machines', () => {
    for (const host of [
      '0.0.0.0',
      '::',
      '192.168.1.10',
      '10.0.0.1',
      '128.0.0.1',
      '::2',
      '::ffff:10.0.0.1',
      'example.com',
      'localhost.example.com',
      '',
    ]) {
      expect(isLoopbackAddress(host), host).toBe(false);
    }
  });
});
