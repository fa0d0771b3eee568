'use strict';
// Gunzip for the answers of ethers' HTTP transport (ethers-http.js), one
// answer at a time, with one zlib stream kept for all of them.
//
// zlib.gunzipSync makes a new stream for every call: a Transform with its
// state, a native handle, zlib's inflate state and its 32 KiB window, all
// allocated and freed again. For the small answers of a JSON-RPC node that
// costs more than the inflating (about 4-6 us against 1-2 us for answers of
// 56-88 bytes in a micro-benchmark); in a profile of the default run making
// the streams was about 4% of the generator's CPU, besides their share of
// malloc and free (docs/results.md). Here the stream's handle is reset and fed
// each answer with Z_FINISH, as gunzipSync feeds its own: the same zlib, the
// same checks (the gzip header, CRC-32 and length), the same bytes out.
//
// The handle's synchronous write is Node.js's own internal interface (what
// gunzipSync calls). Where it is not there, or a self-test at load does not
// give gunzipSync's bytes, every answer goes to zlib.gunzipSync instead.

const zlib = require('node:zlib');

const OUT_BYTES = 64 * 1024;
const { Z_FINISH } = zlib.constants;

/** A zlib Gunzip stream whose handle is written synchronously, or null where the handle is not what this expects. */
function keptStream() {
  const stream = zlib.createGunzip();
  stream.on('error', () => {}); // an answer's error is thrown from gunzip() below; the event would be unhandled
  const handle = stream._handle;
  const state = stream._writeState;
  if (!handle || typeof handle.writeSync !== 'function' || typeof handle.reset !== 'function') return null;
  if (!(state instanceof Uint32Array) || state.length < 2) return null;
  return { stream, handle, state };
}

/**
 * A gunzip(buffer) -> Buffer that keeps one zlib stream; `kept` says whether it does (false: zlib.gunzipSync on every
 * call). A body zlib refuses throws zlib's error (as gunzipSync's), and the next body gets a new stream.
 * @param {{keep?: boolean}} [opts] keep: false always uses zlib.gunzipSync
 */
function newGunzip({ keep = true } = {}) {
  let s = keep ? keptStream() : null;
  const out = Buffer.allocUnsafe(OUT_BYTES);

  const inflate = (input) => {
    const { stream, handle, state } = s;
    handle.reset();
    const parts = [];
    let total = 0;
    let inOff = 0;
    let inLen = input.length;
    for (;;) {
      handle.writeSync(Z_FINISH, input, inOff, inLen, out, 0, OUT_BYTES);
      if (stream.destroyed) {
        // zlib's error destroyed the stream (and closed its handle): the next answer gets a new one
        s = keptStream();
        throw stream.errored || new Error('gunzip failed');
      }
      const availOut = state[0];
      const availIn = state[1];
      const n = OUT_BYTES - availOut;
      if (n) {
        parts.push(Buffer.from(out.subarray(0, n)));
        total += n;
      }
      if (availOut !== 0) break; // room left in the output: zlib is done with this body
      inOff += inLen - availIn; // the output was full: go on from where zlib stopped
      inLen = availIn;
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts, total);
  };

  if (s) {
    // the self-test: a body of several output buffers, then a small one, each against gunzipSync's bytes
    try {
      for (const text of ['{"result":"0x' + 'ab'.repeat(OUT_BYTES) + '"}', '{"jsonrpc":"2.0","id":1,"result":"0x1"}']) {
        const gz = zlib.gzipSync(text);
        if (!inflate(gz).equals(zlib.gunzipSync(gz))) throw new Error('not the same bytes');
      }
    } catch {
      s = null;
    }
  }

  const gunzip = (input) => (s ? inflate(input) : zlib.gunzipSync(input));
  Object.defineProperty(gunzip, 'kept', { get: () => s !== null });
  return gunzip;
}

module.exports = { newGunzip };
