'use strict';
// A Substrate node serves JSON-RPC over HTTP and WebSocket on the same port:
// the workload speaks WebSocket (subscriptions), the toolkit's control calls HTTP.

function wsUrl(url) {
  return url.replace(/^http(s?):/, 'ws$1:');
}

function httpUrl(url) {
  return url.replace(/^ws(s?):/, 'http$1:');
}

module.exports = { wsUrl, httpUrl };
