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
// body gunzipped. Everything above the bytes (the JSON-RPC request, its id,
// the answer's parsing and errors, ethers' retries of a 429) stays ethers'.

const zlib = require('node:zlib');
const { performance } = require('node:perf_hooks');
const { ethers } = require('ethers');
const { HttpPool } = require('./engines/artillery-engine-chainperf/http');

/** The bytes of the request ethers prepared, head and body in one buffer. */
function requestBytes(req, url) {
  const body = req.body ? Buffer.from(req.body) : Buffer.alloc(0);
  const lines = [`${req.method || (body.length ? 'POST' : 'GET')} ${url.pathname}${url.search} HTTP/1.1`];
  lines.push(`Host: ${url.host}`);
  // ethers' headers: content-type, content-length, accept-encoding, authorization and the user's
  const headers = Object.entries(req.headers).filter(([k]) => !/^(host|content-length)$/i.test(k));
  for (const [k, v] of headers) lines.push(`${k}: ${v}`);
  lines.push(`Content-Length: ${body.length}`, '', '');
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]);
}

/** A getUrlFunc for ethers.FetchRequest over one pool of keep-alive connections to url's host. */
function ethersGetUrl(url, { timeoutMs }) {
  const pool = new HttpPool(url, { timeoutMs, now: () => performance.now() });
  const target = new URL(url);
  return async (req) => {
    const res = await pool.request(requestBytes(req, target), performance.now());
    if (res.failure) {
      if (res.failure.kind === 'timeout') throw ethers.makeError('request timeout', 'TIMEOUT');
      throw new Error(res.failure.message);
    }
    const headers = res.encoding ? { 'content-encoding': res.encoding } : {};
    let body = res.body.length ? res.body : null;
    if (body && res.encoding === 'gzip') body = zlib.gunzipSync(body);
    return { statusCode: res.status, statusMessage: '', headers, body };
  };
}

module.exports = { ethersGetUrl, requestBytes };
