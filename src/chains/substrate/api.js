'use strict';
// The toolkit's own @polkadot/api connection (history, harvest), apart from
// the load generator's.

const { ApiPromise, WsProvider } = require('@polkadot/api');
const { wsUrl } = require('./url');

/** Connects, or fails within timeoutMs with the reason. */
async function connectApi(url, { timeoutMs = 60000 } = {}) {
  const provider = new WsProvider(wsUrl(url), false, {}, timeoutMs);
  try {
    await provider.connectWithRetry();
  } catch (err) {
    throw new Error(`cannot connect to ${wsUrl(url)}: ${err.message}`);
  }
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`@polkadot/api not ready after ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([ApiPromise.create({ provider, noInitWarn: true, throwOnConnect: true }), timeout]);
  } catch (err) {
    await provider.disconnect().catch(() => {});
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

module.exports = { connectApi };
