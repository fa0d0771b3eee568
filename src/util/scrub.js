'use strict';
// The output boundary. Everything chainperf writes out (report files, log
// lines, folder names, INDEX.md, plan and compare files, commit messages,
// error messages) passes through scrub(), which replaces the literal secret
// values of the run: the user, password, token-like path segments and
// subdomains and the query values of RPC_URL and METRICS_URL, and the value
// of any other key marked `secret: true` in keys.js. Secrets are registered
// as soon as a scenario is read (resolve.js), before anything can print them.

const fs = require('node:fs');
const path = require('node:path');

const REDACTED = '<redacted>';
/** Shorter values are not replaced in free text (they would replace ordinary words and digits). */
const MIN_LENGTH = 3;
const KEYISH = /key|token|secret|auth|pass|pwd|sig|cred|session|jwt/i;
const TRIVIAL = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'json']);

const secrets = new Set();
let pattern = null; // one RegExp over every form of every secret, longest first

/** Whether a path segment, subdomain or query value is a token rather than a word, version or small number. */
function looksSecret(s) {
  if (s.length < 4) return false;
  return (
    !/^[A-Za-z]{1,15}$/.test(s) &&
    !/^[A-Za-z]{1,15}(?:[-_.][A-Za-z]{1,15})*$/.test(s) &&
    !/^v\d{1,3}$/i.test(s) &&
    !/^\d{1,6}$/.test(s)
  );
}

function decode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The secret parts of a URL: credentials, token-like path segments and subdomains, query values. */
function urlSecrets(raw) {
  let u;
  try {
    u = new URL(raw);
  } catch {
    return [raw];
  }
  const out = [];
  if (u.username) out.push(u.username, decode(u.username));
  if (u.password) out.push(u.password, decode(u.password));
  if (u.username || u.password) {
    const pair = `${decode(u.username)}:${decode(u.password)}`;
    out.push(pair, Buffer.from(pair).toString('base64'));
  }
  for (const seg of u.pathname.split('/')) {
    const d = decode(seg);
    if (looksSecret(d)) out.push(seg, d);
  }
  if (!isIpHost(u.hostname)) {
    for (const label of u.hostname.split('.').slice(0, -2)) if (looksSecret(label)) out.push(label);
  }
  for (const [name, value] of u.searchParams) {
    if (looksSecret(value) || (KEYISH.test(name) && !TRIVIAL.has(value.toLowerCase())))
      out.push(value, encodeURIComponent(value));
  }
  if (looksSecret(decode(u.hash.slice(1)))) out.push(u.hash.slice(1), decode(u.hash.slice(1)));
  return out;
}

function isIpHost(host) {
  return /^\[.*\]$/.test(host) || /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host === 'localhost';
}

/**
 * A URL as reports may show it: scheme, an IP or localhost host and port
 * kept; credentials, subdomains (a key may be one), token-like path segments
 * and every query value replaced.
 */
function redactUrl(raw) {
  let u;
  try {
    u = new URL(raw);
  } catch {
    return REDACTED;
  }
  const auth = u.username || u.password ? `${REDACTED}@` : '';
  const labels = u.hostname.split('.');
  const host = isIpHost(u.hostname) || labels.length <= 2 ? u.hostname : `${REDACTED}.${labels.slice(-2).join('.')}`;
  const segs = u.pathname.split('/').map((s) => (looksSecret(decode(s)) ? REDACTED : s));
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=${REDACTED}`).join('&');
  return `${u.protocol}//${auth}${host}${u.port ? `:${u.port}` : ''}${segs.join('/')}${query ? `?${query}` : ''}`;
}

/** Registers literal secret values (strings shorter than MIN_LENGTH are ignored). */
function addSecrets(values) {
  let added = false;
  for (const v of values) {
    if (typeof v !== 'string' || v.length < MIN_LENGTH || secrets.has(v)) continue;
    secrets.add(v);
    added = true;
  }
  if (added) pattern = null;
}

/** Registers what a scenario key's value holds that must never be written out (the key must be marked secret). */
function addSecretValue(spec, value) {
  if (!spec || !spec.secret || value === undefined || value === null || value === '') return;
  const raw = String(value);
  if (spec.type === 'urls') {
    for (const u of raw.split(',')) addSecretValue({ ...spec, type: 'url' }, u.trim());
    return undefined;
  }
  if (spec.type !== 'url') return addSecrets([raw]);
  const parts = urlSecrets(raw);
  // a URL with nothing secret in it (http://127.0.0.1:8545) stays readable
  return addSecrets(parts.length ? [...parts, raw] : []);
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function compiled() {
  if (pattern || !secrets.size) return pattern;
  const forms = new Set();
  for (const s of secrets) {
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1)); // as it appears inside JSON text
  }
  pattern = new RegExp(
    [...forms]
      .sort((a, b) => b.length - a.length)
      .map(escapeRe)
      .join('|'),
    'g',
  );
  return pattern;
}

/** text with every known secret replaced by <redacted>. */
function scrub(text, replacement = REDACTED) {
  if (typeof text !== 'string') return text;
  const re = compiled();
  return re ? text.replace(re, replacement) : text;
}

/** A copy of a JSON-like value with every string (and object key) scrubbed: JSON stays valid whatever the secret is. */
function scrubDeep(value) {
  // a Date, as JSON.stringify would write it
  if (value && typeof value.toJSON === 'function') return scrubDeep(value.toJSON());
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map(scrubDeep);
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[scrub(k)] = scrubDeep(v);
    return out;
  }
  return value;
}

/** A file or folder name with secrets replaced by "redacted" (no characters a name cannot hold). */
function scrubName(name) {
  return scrub(name, 'redacted');
}

/** Every component of a path scrubbed as a name. */
function scrubPath(p) {
  return p.split(path.sep).map(scrubName).join(path.sep);
}

/** Writes text (or JSON data, when json is true) scrubbed. */
function writeScrubbed(file, data, { json = false } = {}) {
  const text = json ? `${JSON.stringify(scrubDeep(data), null, 2)}\n` : scrub(String(data));
  fs.writeFileSync(file, text);
}

/** Copies a text file, scrubbed. */
function copyScrubbed(src, dst) {
  fs.writeFileSync(dst, scrub(fs.readFileSync(src, 'utf8')));
}

/** Copies the last `lines` lines of a text file (a node's log), scrubbed. */
function copyTailScrubbed(src, dst, lines) {
  fs.writeFileSync(dst, scrub(fs.readFileSync(src, 'utf8').split('\n').slice(-lines).join('\n')));
}

/** The Error's message scrubbed (for messages built from a caught error). */
function scrubError(err) {
  return scrub(err && err.message !== undefined ? err.message : String(err));
}

/** Forgets every secret (unit tests). */
function resetSecrets() {
  secrets.clear();
  pattern = null;
}

module.exports = {
  scrub,
  scrubDeep,
  scrubName,
  scrubPath,
  scrubError,
  writeScrubbed,
  copyScrubbed,
  copyTailScrubbed,
  addSecrets,
  addSecretValue,
  urlSecrets,
  redactUrl,
  looksSecret,
  resetSecrets,
  REDACTED,
};
