'use strict';
// An ethers provider for a JSON-RPC URL: JsonRpcProvider over HTTP(S), or
// WebSocketProvider over ws:// and wss://. The WebSocket is made here, with an
// error listener, so a refused or broken connection is an error the caller
// sees (a timeout, a closed socket) rather than an uncaught exception.

const WebSocket = require('ws');
const { ethers } = require('ethers');
const { isWebSocketUrl } = require('../../util/rpc');
const { splitAuth } = require('../../util/url-auth');

/** An ethers FetchRequest for url, with basic auth from the URL sent as a header. */
function fetchRequestFor(url) {
  const target = splitAuth(url);
  const req = new ethers.FetchRequest(target.url);
  for (const [k, v] of Object.entries(target.headers)) req.setHeader(k, v);
  return req;
}

/**
 * @param {string} url
 * @param {ethers.Network|undefined} network
 * @param {object} options ethers provider options
 * @param {{fetchRequest?: ethers.FetchRequest}} [over] a prepared FetchRequest for HTTP (agent, timeout)
 * @returns {ethers.JsonRpcProvider|ethers.WebSocketProvider} with closed(): true once its WebSocket is closing or
 * closed (always false over HTTP)
 */
function ethersProvider(url, network, options, over = {}) {
  if (!isWebSocketUrl(url)) {
    const provider = new ethers.JsonRpcProvider(over.fetchRequest || fetchRequestFor(url), network, options);
    provider.closed = () => false;
    return provider;
  }
  let socket = null;
  const provider = new ethers.WebSocketProvider(
    () => {
      const target = splitAuth(url);
      socket = new WebSocket(target.url, { headers: target.headers });
      socket.on('error', (err) => {
        provider.lastError = err; // 'close' follows; pending calls end by their own timeouts
      });
      return socket;
    },
    network,
    { ...options, batchMaxCount: 1 },
  );
  provider.closed = () => !socket || socket.readyState >= WebSocket.CLOSING;
  return provider;
}

/**
 * ethers decodes every HTTP response body with its own JavaScript UTF-8 decoder (FetchResponse.bodyText, one array of
 * code points a body): in a profile of the default workload it was a third of the load generator's CPU, and much of
 * its garbage collection. This puts the runtime's native decoder (TextDecoder, fatal on invalid UTF-8, as ethers is)
 * in its place, in this process; the text, and the error for a body that is not UTF-8, are ethers' own. Idempotent.
 */
function useNativeUtf8Decoding() {
  const proto = ethers.FetchResponse.prototype;
  const own = Object.getOwnPropertyDescriptor(proto, 'bodyText');
  if (!own || !own.get || own.get.native) return; // not the ethers this was written for, or done already
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const get = function bodyText() {
    const body = this.body;
    if (body == null) return '';
    try {
      return decoder.decode(body);
    } catch {
      return ethers.assert(false, 'response body is not valid UTF-8 data', 'UNSUPPORTED_OPERATION', {
        operation: 'bodyText',
        info: { response: this },
      });
    }
  };
  get.native = true;
  Object.defineProperty(proto, 'bodyText', { get, configurable: true, enumerable: false });
}

module.exports = { ethersProvider, fetchRequestFor, useNativeUtf8Decoding };
