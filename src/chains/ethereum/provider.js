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

module.exports = { ethersProvider, fetchRequestFor };
