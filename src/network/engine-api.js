// @ts-check
'use strict';
// The engine API as a consensus client speaks it to an execution client: the
// JWT secret and its HS256 bearer token, one authenticated call, payload
// attributes, and a forkchoice update told again while geth's beacon syncer is
// busy. The driver that uses them is engine-driver.js.

const crypto = require('node:crypto');
const fs = require('node:fs');
const { sleep } = require('../util/time');

/** A new 32-byte JWT secret, as geth reads it from --authrpc.jwtsecret (hex). */
function writeJwtSecret(file) {
  fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
  return file;
}

const b64url = (buf) => Buffer.from(buf).toString('base64url');

/** The engine API's bearer token: HS256 over {iat}, valid for a minute either side of now. */
function jwtToken(secretHex, nowS = Math.floor(Date.now() / 1000)) {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify({ iat: nowS }));
  const sig = crypto.createHmac('sha256', Buffer.from(secretHex.replace(/^0x/, ''), 'hex')).update(`${head}.${body}`);
  return `${head}.${body}.${b64url(sig.digest())}`;
}

/** One authenticated engine API call. */
async function engineCall(url, secretHex, method, params, timeoutMs = 10000) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwtToken(secretHex)}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`${method} at ${url}: HTTP ${res.status}`);
  const body = await res.json();
  if (body.error) throw new Error(`${method} at ${url}: ${body.error.message}`);
  return body.result;
}

const ZERO32 = `0x${'00'.repeat(32)}`;

/** Payload attributes (V3) for a block at `timestamp`: a random prevRandao, no withdrawals, a zero beacon root. */
function payloadAttributes(timestamp, feeRecipient) {
  return {
    timestamp: `0x${timestamp.toString(16)}`,
    prevRandao: `0x${crypto.randomBytes(32).toString('hex')}`,
    suggestedFeeRecipient: feeRecipient,
    withdrawals: [],
    parentBeaconBlockRoot: ZERO32,
  };
}

/**
 * geth's answer to a head it is told while its beacon syncer is restarting a sync cycle, for a head told a moment
 * before (eth/downloader/skeleton.go): transient, the same call a moment later is taken.
 */
const syncerBusy = (err) => /beacon syncer reorging/.test(String(err && err.message));
const SYNCER_BUSY_TRIES = 10;
const SYNCER_BUSY_WAIT_MS = 500;

/**
 * tell() (a forkchoice update), again while geth answers that its syncer is busy; any other error at once. An abort
 * of signal (Ctrl-C) ends the waits between tries.
 */
async function tellHead(tell, signal) {
  for (let k = 1; ; k++) {
    try {
      return await tell();
    } catch (err) {
      if (k >= SYNCER_BUSY_TRIES || !syncerBusy(err)) throw err;
      await sleep(SYNCER_BUSY_WAIT_MS, signal);
    }
  }
}

module.exports = { writeJwtSecret, jwtToken, engineCall, payloadAttributes, tellHead, ZERO32 };
