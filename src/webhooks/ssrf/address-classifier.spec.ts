import { describe, expect, it } from 'vitest';
import { CidrList, addressBytes, isPublicAddress } from './address-classifier.js';

// Classification only: nothing here opens a socket or asks DNS.
describe('isPublicAddress', () => {
  const blocked = [
    // IPv4
    '0.0.0.0', '0.1.2.3', '10.0.0.1', '10.255.255.255', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.255.255.254',
    '169.254.0.1', '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.0.2.1', '192.88.99.1',
    '192.168.1.1', '198.18.0.1', '198.19.255.255', '198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.250',
    '240.0.0.1', '255.255.255.255',
    // IPv6
    '::', '::1', '[::1]', '100::1', '64:ff9b:1::a', '2001:db8::1', '3fff::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%eth0',
    'febf::1', 'fec0::1', 'ff02::1', 'ff0e::1',
    // IPv4 forms inside IPv6
    '::ffff:127.0.0.1', '::ffff:7f00:1', '[::ffff:127.0.0.1]', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:192.168.0.1',
    '::127.0.0.1', '::a9fe:a9fe', '64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::10.1.2.3', '2002:7f00:1::1', '2002:a00:1::',
    '2002:c0a8:101::1',
    // IPv4-translated (SIIT, ::ffff:0:0:0/96): 127.0.0.1, 10.0.0.1, 169.254.169.254, 192.168.1.1, 0.0.0.0
    '::ffff:0:7f00:1', '[::ffff:0:7f00:1]', '::ffff:0:a00:1', '::ffff:0:a9fe:a9fe', '::ffff:0:127.0.0.1', '0:0:0:0:ffff:0:c0a8:101', '::ffff:0:0:0',
    // more of each embedded form, and the other special ranges
    '::10.0.0.1', '::169.254.169.254', '64:ff9b::c0a8:101', '64:ff9b::a9fe:a9fe', '64:ff9b:1::8.8.8.8', '64:ff9b:1:ffff::1',
    '2002:a9fe:a9fe::1', '2002:a00:1:ffff::1', '2002:6440::1',
    'fe80::abcd:1234', 'fdff:ffff::1', 'fc00:1::1', 'ff05::2', 'ff3e::8000:1', '::ffff:224.0.0.1', '::ffff:255.255.255.255',
    // Teredo (2001::/32) tunnels to addresses it hides; benchmarking 2001:2::/48; ORCHID 2001:10::/28, 2001:20::/28
    '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::1', '2001:0:ffff::1', '2001:2::1', '2001:2:0:ffff::1', '2001:10::1', '2001:20::1', '2001:2f:ffff::1',
  ];
  it.each(blocked)('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  const open = ['1.1.1.1', '8.8.8.8', '93.184.215.14', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.0.1.1',
    '198.17.255.255', '198.20.0.0', '223.255.255.255', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808',
    '2002:808:808::1', 'fbff::1', 'fe7f::1', '::ffff:0:808:808', '2001:1::1', '2001:3::1', '2001:4:112::1', '2001:200::1', '2001:db7::1', '2001:db9::1'];
  it.each(open)('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('is false for anything that is not an IP address', () => {
    for (const text of ['localhost', 'example.com', '127.1', '0x7f.0.0.1', '2130706433', '', '1.2.3.4.5']) expect(isPublicAddress(text)).toBe(false);
  });
});

describe('addressBytes', () => {
  it('parses IPv6 with compression, embedded IPv4 and zones', () => {
    expect(Array.from(addressBytes('::ffff:127.0.0.1') ?? [])).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1]);
    expect(Array.from(addressBytes('fe80::1%lo') ?? [])).toEqual([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect(Array.from(addressBytes('1:2:3:4:5:6:7:8') ?? [])).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
  });
});

describe('CidrList', () => {
  it('matches IPv4, IPv6 and IPv4-mapped addresses', () => {
    const list = new CidrList(['127.0.0.0/8', '::1/128']);
    expect(list.contains('127.0.0.1')).toBe(true);
    expect(list.contains('127.9.9.9')).toBe(true);
    expect(list.contains('::1')).toBe(true);
    expect(list.contains('::ffff:127.0.0.1')).toBe(true);
    expect(list.contains('128.0.0.1')).toBe(false);
    expect(list.contains('::2')).toBe(false);
    expect(new CidrList([]).empty).toBe(true);
  });
  it('refuses a malformed CIDR', () => {
    expect(() => new CidrList(['10.0.0.0/33'])).toThrow();
    expect(() => new CidrList(['nope/8'])).toThrow();
  });
});
