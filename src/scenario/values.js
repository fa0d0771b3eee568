'use strict';
// A scenario value as written (a string in a .env file or the environment) turned
// into its key's type, or the reason it cannot be: one converter per key type
// (src/scenario/keys.js). The workload's value is checked against the shipped
// workloads and the capture files.

const fs = require('node:fs');
const path = require('node:path');
const { KEYS } = require('./keys');
const { closest } = require('../util/strings');
const net = require('node:net');
const { replayMix } = require('../workload/replay');
const { WORKLOADS_DIR } = require('../util/paths');

function convertNumber(spec, raw) {
  const ok = spec.type === 'int' ? /^-?\d+$/.test(raw) : /^-?(\d+\.?\d*|\.\d+)$/.test(raw);
  const n = Number(raw);
  if (!ok || n < spec.min || n > spec.max)
    return {
      error: `expected ${spec.type === 'int' ? 'an integer' : 'a number'} from ${spec.min} to ${spec.max}, got "${raw}"`,
    };
  return { value: n };
}

function convertEnum(spec, raw) {
  if (!spec.values.includes(raw)) {
    const near = closest(raw, spec.values);
    return {
      error: `expected one of ${spec.values.join(' | ')}, got "${raw}"${near ? ` (did you mean ${near}?)` : ''}`,
    };
  }
  return { value: raw };
}

function convertUrl(spec, raw) {
  const schemes = spec.schemes || ['http', 'https'];
  try {
    const u = new URL(raw);
    if (!schemes.includes(u.protocol.slice(0, -1))) throw new Error('scheme');
  } catch {
    return {
      error: `expected ${schemes
        .map((x) => `${x}://`)
        .join(', ')
        .replace(/, ([^,]*)$/, ' or $1')} URL, got "${raw}"`,
    };
  }
  return { value: raw };
}

/** A comma-separated list of URLs (REPLICA_METRICS), each as convertUrl takes it. */
function convertUrls(spec, raw) {
  const list = raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  if (!list.length) return { error: `expected one or more URLs separated by commas, got "${raw}"` };
  for (const u of list) {
    const r = convertUrl(spec, u);
    if (r.error) return r;
  }
  return { value: list.join(',') };
}

/** One converter per key type: (spec, raw) -> {value} or {error}. */
const CONVERTERS = {
  int: convertNumber,
  number: convertNumber,
  enum: convertEnum,
  bool: (_spec, raw) =>
    ['true', 'false', '1', '0'].includes(raw)
      ? { value: raw === 'true' || raw === '1' }
      : { error: `expected true or false, got "${raw}"` },
  version: (_spec, raw) =>
    /^\d+\.\d+\.\d+$/.test(raw) ? { value: raw } : { error: `expected a version like 1.16.7, got "${raw}"` },
  url: convertUrl,
  urls: convertUrls,
  workload: (_spec, raw) => checkWorkload(raw),
  // IPv4 only: compose's short port syntax and the URLs built from it take no bare IPv6 address.
  ip: (_spec, raw) =>
    net.isIPv4(raw) ? { value: raw } : { error: `expected an IPv4 address such as 127.0.0.1 or 0.0.0.0, got "${raw}"` },
  name: (_spec, raw) =>
    /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(raw)
      ? { value: raw }
      : { error: `expected a Docker volume name (letters, digits, _ . -), got "${raw}"` },
};

/** Converts a raw string to the key's type; returns {value} or {error: what is allowed}. */
function convert(key, raw) {
  const spec = KEYS[key];
  const converter = CONVERTERS[spec.type];
  return converter ? converter(spec, raw) : { value: raw };
}

function checkWorkload(raw) {
  if (raw.startsWith('replay:')) {
    const file = raw.slice('replay:'.length);
    if (!file) return { error: 'expected replay:<capture file>, e.g. replay:captures/mainnet.jsonl' };
    if (!fs.existsSync(file)) return { error: `replay: no such capture file: ${file}` };
    try {
      replayMix(file);
    } catch (err) {
      return { error: `replay: ${file} is not a capture of ./run.sh record: ${err.message.replace(`${file}: `, '')}` };
    }
    return { value: raw };
  }
  if (raw.startsWith('method:')) {
    const method = raw.slice('method:'.length);
    if (!method) return { error: 'expected method:<rpc method>, e.g. method:eth_getBalance' };
    return { value: raw, method };
  }
  if (!/^[A-Za-z0-9_.-]+$/.test(raw)) return { error: `expected a workload name or method:<rpc method>, got "${raw}"` };
  if (!fs.existsSync(path.join(WORKLOADS_DIR, `${raw}.yml`))) {
    const names = listWorkloads();
    const near = closest(raw, names);
    return {
      error: `no workload "${raw}" in workloads/ (shipped: ${names.join(', ')})${near ? `; did you mean ${near}?` : ''}`,
    };
  }
  return { value: raw };
}

function listWorkloads() {
  return fs
    .readdirSync(WORKLOADS_DIR)
    .filter((f) => f.endsWith('.yml'))
    .map((f) => f.slice(0, -4))
    .sort();
}

module.exports = { convertNumber, convertEnum, convertUrl, CONVERTERS, convert, checkWorkload, listWorkloads };
