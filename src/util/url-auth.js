'use strict';
// Credentials in an endpoint URL (http://user:pass@host/..., ws://user:pass@host/...),
// as many providers issue them, are sent as an HTTP Basic Authorization header:
// fetch() refuses a URL that holds credentials, and a header is what every
// client here (fetch, ethers, ws, the lean engine's sockets) can send. Keys in
// the path and the query stay in the URL, on the wire.

/**
 * @param {string} url
 * @returns {{url: string, headers: Object<string,string>}} the URL without its credentials and the headers that carry
 * them
 */
function splitAuth(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return { url, headers: {} };
  }
  if (!u.username && !u.password) return { url, headers: {} };
  const pair = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  u.username = '';
  u.password = '';
  return { url: u.toString(), headers: { authorization: `Basic ${Buffer.from(pair).toString('base64')}` } };
}

module.exports = { splitAuth };
