'use strict';
// The HTTP transport under ethers in the default generator (GENERATOR=ethers,
// TRANSPORT=http). ethers lets a FetchRequest say how its bytes travel
// (getUrlFunc); by default that is Node's http module, whose per-request
// machinery (a ClientRequest, header objects, stream plumbing, an abort
// controller) was most of the generator's own CPU in a profile of the
// default run. Here the request ethers prepared (its method, URL, headers
// and body, Accept-Encoding: gzip included, so the node does the same work
// for it) goes out on the lean engine's keep-alive sockets, and its answer
// comes back to ethers as Node's would: status, headers ethers reads, the
// body gunzipped (by one kept zlib stream, gunzip.js). Everything above the
// bytes (the JSON-RPC request, its id, the answer's parsing and errors,
// ethers' retries of a 429) stays ethers'.

const { performance } = require('node:perf_hooks');
const { ethers } = require('ethers');
const { HttpPool } = require('./engines/artillery-engine-chainperf/http');
const { newGunzip } = require('./gunzip');

/** The bytes of the request ethers prepared, head and body in one buffer (allocated once). */
function requestBytes(req, url) {
  const body = req.body; // a copy (ethers' getter), or null
  const length = body ? body.length : 0;
  let head = `${req.method || (length ? 'POST' : 'GET')} ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n`;
  // ethers' headers, keys in lower case: content-type, content-length, accept-encoding, authorization and the user's
  const headers = req.headers;
  for (const k in headers) if (k !== 'host' && k !== 'content-length') head += `${k}: ${headers[k]}\r\n`;
  head += `Content-Length: ${length}\r\n\r\n`;
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(head, 'latin1') + length);
  const at = bytes.latin1Write(head, 0);
  if (length) bytes.set(body, at);
  return bytes;
}

/** A getUrlFunc for ethers.FetchRequest over one pool of keep-alive connections to url's host. */
function ethersGetUrl(url, { timeoutMs }) {
  const pool = new HttpPool(url, { timeoutMs, now: () => performance.now() });
  const target = new URL(url);
  const gunzip = newGunzip(); // one zlib stream for all the answers (gunzip.js)
  return async (req) => {
    const res = await pool.request(requestBytes(req, target), performance.now());
    if (res.failure) {
      if (res.failure.kind === 'timeout') throw ethers.makeError('request timeout', 'TIMEOUT');
      throw new Error(res.failure.message);
    }
    const headers = res.encoding ? { 'content-encoding': res.encoding } : {};
    let body = res.body.length ? res.body : null;
    if (body && res.encoding === 'gzip') body = gunzip(body);
    return { statusCode: res.status, statusMessage: '', headers, body };
  };
}

module.exports = { ethersGetUrl, requestBytes };
