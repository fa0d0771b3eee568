'use strict';
// The ethers provider's response decoding: the runtime's native UTF-8 decoder
// in place of ethers' own gives the same text and the same error.

const assert = require('node:assert/strict');
const { ethers } = require('ethers');
const { useNativeUtf8Decoding } = require('../../src/chains/ethereum/provider');

/** A FetchResponse holding body, as ethers makes one from an HTTP answer. */
const response = (body) => new ethers.FetchResponse(200, 'OK', { 'content-type': 'application/json' }, body, null);

describe('ethers responses decoded natively', () => {
  const samples = [
    '{"jsonrpc":"2.0","id":1,"result":"0x1"}',
    '{"jsonrpc":"2.0","id":2,"result":{"extraData":"é ü € 𝄞 ☃","logs":[]}}',
    '\uFEFF{"a":1}', // a byte order mark is kept, as ethers keeps it
    '',
  ];
  const ethersText = samples.map((t) => response(ethers.toUtf8Bytes(t)).bodyText);

  before(() => useNativeUtf8Decoding());

  it('gives the text ethers gives, for ASCII, multi-byte characters, a byte order mark and an empty body', () => {
    assert.equal(Object.getOwnPropertyDescriptor(ethers.FetchResponse.prototype, 'bodyText').get.native, true);
    samples.forEach((t, i) => {
      assert.equal(response(ethers.toUtf8Bytes(t)).bodyText, ethersText[i]);
      assert.equal(ethersText[i], t);
    });
    assert.deepEqual(response(ethers.toUtf8Bytes(samples[1])).bodyJson, JSON.parse(samples[1]));
    assert.equal(response(null).bodyText, '');
  });

  it('refuses a body that is not UTF-8 with the error ethers gives', () => {
    const bad = response(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
    assert.throws(
      () => bad.bodyText,
      (err) => err.code === 'UNSUPPORTED_OPERATION' && /not valid UTF-8/.test(err.message),
    );
    assert.throws(
      () => bad.bodyJson,
      (err) => err.code === 'UNSUPPORTED_OPERATION',
    );
  });

  it('is done once: a second call changes nothing', () => {
    const before = Object.getOwnPropertyDescriptor(ethers.FetchResponse.prototype, 'bodyText').get;
    useNativeUtf8Decoding();
    assert.equal(Object.getOwnPropertyDescriptor(ethers.FetchResponse.prototype, 'bodyText').get, before);
  });
});
