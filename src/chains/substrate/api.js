'use strict';
// The toolkit's own @polkadot/api connection (history, harvest), apart from
// the load generator's.

const { ApiPromise, WsProvider } = require('@polkadot/api');
const { wsUrl } = require('./url');
const { splitAuth } = require('../../util/url-auth');

/** Connects, or fails within timeoutMs with the reason. */
async function connectApi(url, { timeoutMs = 60000 } = {}) {
  // Retries the connection every second until ready or timeoutMs; no result cache, like the load generator.
  const target = splitAuth(wsUrl(url)); // basic auth from the URL goes as a header
  const provider = new WsProvider(target.url, 1000, target.headers, timeoutMs, 0);
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`@polkadot/api not connected to ${wsUrl(url)} after ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([ApiPromise.create({ provider, noInitWarn: true }), timeout]);
  } catch (err) {
    await provider.disconnect().catch(() => {});
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

module.exports = { connectApi };
