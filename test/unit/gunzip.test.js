'use strict';
// The kept gunzip of ethers' HTTP transport (src/workload/gunzip.js): the bytes zlib.gunzipSync gives, for bodies
// small and larger than its output buffer, several gzip members, and the same error as gunzipSync's for a body zlib
// refuses, after which the next body is read again.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { newGunzip } = require('../../src/workload/gunzip');

describe('the kept gunzip (ethers over HTTP)', () => {
  const bodies = [
    '{"jsonrpc":"2.0","id":1,"result":"0x1"}',
    JSON.stringify({ jsonrpc: '2.0', id: 2, result: Array.from({ length: 50 }, (_, i) => ({ i, h: `0x${i}` })) }),
    crypto.randomBytes(200 * 1024).toString('hex'), // several times the 64 KiB output buffer
    '',
  ];

  it('keeps one stream on this Node.js (its self-test passed)', () => {
    assert.equal(newGunzip().kept, true);
    assert.equal(newGunzip({ keep: false }).kept, false);
  });

  for (const keep of [true, false])
    it(`gives gunzipSync's bytes, body after body (keep: ${keep})`, () => {
      const gunzip = newGunzip({ keep });
      for (let round = 0; round < 3; round++)
        for (const text of bodies) {
          const gz = zlib.gzipSync(text);
          assert.equal(gunzip(gz).toString(), text);
        }
      const two = Buffer.concat([zlib.gzipSync('{"a":'), zlib.gzipSync('1}')]);
      assert.equal(
        gunzip(two).toString(),
        zlib.gunzipSync(two).toString(),
        'two gzip members, as gunzipSync reads them',
      );
    });

  it("throws gunzipSync's error for a body that is not gzip, or cut short, and reads the next body again", () => {
    const gunzip = newGunzip();
    const good = zlib.gzipSync('{"result":"0x2"}');
    const errOf = (f) => {
      try {
        f();
      } catch (err) {
        return err;
      }
      return assert.fail('no error');
    };
    for (const bad of [Buffer.from('not gzip at all'), good.subarray(0, good.length - 6)]) {
      const mine = errOf(() => gunzip(bad));
      const theirs = errOf(() => zlib.gunzipSync(bad));
      assert.equal(mine.message, theirs.message);
      assert.equal(mine.code, theirs.code);
      assert.equal(gunzip(good).toString(), '{"result":"0x2"}');
      assert.equal(gunzip.kept, true, 'a new stream after the error');
    }
    const flipped = Buffer.from(good);
    flipped[flipped.length - 5] ^= 0xff; // the CRC-32 no longer matches
    assert.equal(errOf(() => gunzip(flipped)).message, errOf(() => zlib.gunzipSync(flipped)).message);
  });
});
