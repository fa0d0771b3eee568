// @ts-check
'use strict';
// Chain traffic profiles (CHAIN_LOAD): how much gas a local network's blocks
// carry and what kind of transactions fill them. A profile is a slot time,
// the block gas limit, the gas a block should hold at that slot, and a mix of
// transaction kinds by count. The feed keeps the profile's gas per SECOND: at
// a shorter block time (DEV_BLOCK_TIME_S) the blocks are proportionally
// smaller, so the chain carries the same traffic whatever its slot.
//
// Built in:
//   quiet   - no chain traffic of this feed: the network's NETWORK_TPS transfers alone.
//   mainnet - Ethereum mainnet's shape: 12 s slots, the 60M gas limit mainnet has had since November 2025,
//             blocks at half of it (EIP-1559's target, where mainnet's blocks sit on average).
//   heavy   - the same mix in blocks at 95% of the limit: full blocks. Not 100%: a block cannot be packed to its
//             last unit of gas (it ends short of the next pending transaction that no longer fits), and traffic at
//             the limit would leave every slot's surplus waiting in the pools for good; at 95% it drains.
//
// A profile of one's own is a YAML file (slot_s, gas_limit, gas_target, mix); readChainLoad checks it.

const fs = require('node:fs');
const path = require('node:path');
const yaml = require('js-yaml');
const { closest } = require('../../util/strings');

/** The transaction kinds a mix may weigh (kinds.js builds them). */
const KINDS = ['eth_transfer', 'erc20_transfer', 'storage_write', 'deploy'];

/**
 * The mix by count. Glassnode's classification of mainnet's transactions (as Delphi Digital charted it in 2023):
 * plain ETH transfers between accounts about 29%, ERC-20 transfers about 25% with stablecoins (whose share has grown
 * since); contract creations about 1%; the rest are calls of other contracts (exchanges, lending, NFTs), which
 * storage_write stands for: a call that reads and writes a handful of slots.
 */
const MAINNET_MIX = { eth_transfer: 0.3, erc20_transfer: 0.3, storage_write: 0.39, deploy: 0.01 };
const MAINNET_GAS_LIMIT = 60_000_000;
const HEAVY_SHARE = 0.95;

const BUILT_IN = {
  quiet: { quiet: true, doc: "today's traffic: NETWORK_TPS plain transfers a second, no chain load" },
  mainnet: {
    slot_s: 12,
    gas_limit: MAINNET_GAS_LIMIT,
    gas_target: MAINNET_GAS_LIMIT / 2,
    mix: MAINNET_MIX,
    doc: "mainnet's shape: 12 s slots, blocks at half of the 60M gas limit, its mix of transfers, token transfers, contract calls and deployments",
  },
  heavy: {
    slot_s: 12,
    gas_limit: MAINNET_GAS_LIMIT,
    gas_target: MAINNET_GAS_LIMIT * HEAVY_SHARE,
    mix: MAINNET_MIX,
    doc: "mainnet's mix in full blocks (95% of the 60M gas limit: a block cannot be packed to its last unit of gas, and a slot's surplus must drain)",
  },
};

/** The feed's sending accounts: enough that no one account's queue in a pool holds the traffic back. */
const FEED_SENDERS = 64;
const POOL_SLOTS = 5120; // geth's default --txpool.globalslots
const ACCOUNT_SLOTS = 16; // geth's default --txpool.accountslots

const FILE_KEYS = ['slot_s', 'gas_limit', 'gas_target', 'mix'];
const MIN_GAS_LIMIT = 5000; // geth's floor for a block's gas limit
const MIN_GAS_TARGET = 21000; // one plain transfer

/** The line (1-based) of `key:` in a YAML text, the first one after line `from`; null when not found. */
function lineOf(text, key, from = 0) {
  const lines = text.split('\n');
  const re = new RegExp(`^\\s*['"]?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}['"]?\\s*:`);
  for (let i = from; i < lines.length; i++) if (re.test(lines[i])) return i + 1;
  return null;
}

const isNumber = (x) => typeof x === 'number' && Number.isFinite(x);

/** The checks of a file's numbers: [key, problem] pairs. */
function numberProblems(doc) {
  const out = [];
  const { slot_s: slot, gas_limit: limit, gas_target: target } = doc;
  if (slot === undefined) out.push(['slot_s', 'missing: the block time in seconds, a whole number from 1 to 60']);
  else if (!Number.isInteger(slot) || slot < 1 || slot > 60)
    out.push(['slot_s', `${JSON.stringify(slot)}: expected a whole number of seconds from 1 to 60`]);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < MIN_GAS_LIMIT))
    out.push(['gas_limit', `${JSON.stringify(limit)}: expected a whole number of gas, at least ${MIN_GAS_LIMIT}`]);
  if (target === undefined) out.push(['gas_target', 'missing: the gas a block should hold, a whole number']);
  else if (!Number.isInteger(target) || target < MIN_GAS_TARGET)
    out.push(['gas_target', `${JSON.stringify(target)}: expected a whole number of gas, at least ${MIN_GAS_TARGET}`]);
  else if (isNumber(limit ?? MAINNET_GAS_LIMIT) && target > (limit ?? MAINNET_GAS_LIMIT))
    out.push([
      'gas_target',
      `${target} is above the block gas limit (${limit ?? `${MAINNET_GAS_LIMIT}, the default`}): expected at most the gas_limit`,
    ]);
  return out;
}

/** The checks of a file's mix: [kind or 'mix', problem] pairs. */
function mixProblems(mix) {
  if (mix === undefined) return [['mix', `missing: weights by count of ${KINDS.join(', ')} (kind: weight)`]];
  if (!mix || typeof mix !== 'object' || Array.isArray(mix))
    return [['mix', `expected kind: weight pairs of ${KINDS.join(', ')}`]];
  const out = [];
  for (const [kind, w] of Object.entries(mix)) {
    if (!KINDS.includes(kind)) {
      const near = closest(kind, KINDS) || KINDS.find((k) => k.startsWith(kind.toLowerCase()));
      out.push([kind, `unknown kind${near ? ` (did you mean ${near}?)` : ''}; known: ${KINDS.join(', ')}`]);
    } else if (!isNumber(w) || w <= 0) out.push([kind, `${JSON.stringify(w)}: expected a weight above 0`]);
  }
  if (!out.length && !Object.keys(mix).length) out.push(['mix', `empty: give at least one of ${KINDS.join(', ')}`]);
  return out;
}

/** A profile file's problems, each naming the file, the line where it can be found, and what is accepted. */
function fileProblems(file, text, doc) {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    return [`${file}: expected a YAML mapping of ${FILE_KEYS.join(', ')}`];
  const where = (key, from) => {
    const line = lineOf(text, key, from);
    return line ? `${file}:${line}` : file;
  };
  const errors = [];
  for (const key of Object.keys(doc))
    if (!FILE_KEYS.includes(key)) {
      const near = closest(key, FILE_KEYS);
      errors.push(
        `${where(key)}: unknown key ${key}${near ? ` (did you mean ${near}?)` : ''}; known: ${FILE_KEYS.join(', ')}`,
      );
    }
  for (const [key, problem] of numberProblems(doc)) errors.push(`${where(key)}: ${key}: ${problem}`);
  const mixLine = (lineOf(text, 'mix') || 1) - 1;
  for (const [key, problem] of mixProblems(doc.mix))
    errors.push(`${where(key, key === 'mix' ? 0 : mixLine)}: ${key === 'mix' ? 'mix' : `mix.${key}`}: ${problem}`);
  return errors;
}

/** Reads a profile file: {spec, errors}; spec is the file's values with the defaults filled in. */
function readFile(value, baseDir) {
  const file = path.resolve(baseDir, value);
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const names = Object.keys(BUILT_IN).join(', ');
    return {
      errors: [`${value} is neither a built-in profile (${names}) nor a readable file (${err.code || err.message})`],
    };
  }
  let doc;
  try {
    doc = yaml.load(text);
  } catch (err) {
    const line = err.mark ? `:${err.mark.line + 1}` : '';
    return { errors: [`${file}${line}: not valid YAML (${err.reason || err.message})`] };
  }
  const errors = fileProblems(file, text, doc);
  if (errors.length) return { errors };
  return { spec: { gas_limit: MAINNET_GAS_LIMIT, ...doc, source: file }, errors: [] };
}

/** Shares of the mix summing to 1, by kind, in KINDS' order. */
function shares(mix) {
  const total = Object.values(mix).reduce((s, w) => s + w, 0);
  return Object.fromEntries(KINDS.filter((k) => mix[k] > 0).map((k) => [k, mix[k] / total]));
}

/**
 * A profile at the block time the network makes blocks at (slotS, or the profile's own slot): the gas per second the
 * profile gives (gas_target / slot_s) times that block time is the gas each block should hold.
 */
function atSlot(name, spec, slotS) {
  const blockTime = slotS || spec.slot_s;
  const perS = spec.gas_target / spec.slot_s;
  const perBlock = Math.round(perS * blockTime);
  const profile = {
    name,
    source: spec.source || 'built-in',
    quiet: false,
    slot_s: spec.slot_s,
    block_time_s: blockTime,
    gas_limit: spec.gas_limit,
    gas_target: spec.gas_target,
    target_gas_per_s: perS,
    target_gas_per_block: perBlock,
    mix: shares(spec.mix),
  };
  const errors = [];
  if (perBlock > spec.gas_limit)
    errors.push(
      `at a block time of ${blockTime} s (DEV_BLOCK_TIME_S) the profile's ${(perS / 1e6).toFixed(3)} Mgas/s makes blocks of ${perBlock} gas, above its gas limit of ${spec.gas_limit}: expected a block time of at most ${Math.floor(spec.gas_limit / perS)} s`,
    );
  else if (perBlock < MIN_GAS_TARGET)
    errors.push(
      `at a block time of ${blockTime} s (DEV_BLOCK_TIME_S) the profile's ${perS.toFixed(0)} gas/s makes blocks of ${perBlock} gas, less than one transfer (${MIN_GAS_TARGET})`,
    );
  return { profile, errors };
}

/**
 * What the network must allow for a profile's traffic:
 * - gas_limit: blocks of the profile's gas limit (a dev genesis's gasLimit, and the builder's target: geth
 *   --miner.gaslimit; a STATE profile's genesis has 200M, which geth moves 1/1024 a block toward that target);
 * - txpool_global_slots, txpool_account_slots: a transaction pool with room for four blocks of the cheapest
 *   transactions (geth --txpool.globalslots, at least its default) shared by the feed's senders
 *   (--txpool.accountslots): a block the builder missed leaves two blocks' worth waiting, and none is dropped;
 * - rpc_tx_fee_cap: 0, no cap on a transaction's fee sent through RPC (geth --rpc.txfeecap; its default of 1 ether
 *   refuses the feed's dearest transactions once blocks above half full have raised the base fee to about 700 gwei).
 * @param {{gas_limit: number, target_gas_per_block: number}} profile
 */
function chainNeeds(profile, senders = FEED_SENDERS) {
  const slots = Math.max(POOL_SLOTS, Math.ceil((4 * profile.target_gas_per_block) / MIN_GAS_TARGET));
  return {
    gas_limit: profile.gas_limit,
    txpool_global_slots: slots,
    txpool_account_slots: Math.max(ACCOUNT_SLOTS, Math.ceil(slots / senders)),
    rpc_tx_fee_cap: 0,
  };
}

/**
 * CHAIN_LOAD's value: a built-in profile's name or a path to a profile file (relative to baseDir). slotS: the block
 * time the network will make blocks at when the scenario sets it (DEV_BLOCK_TIME_S); the profile keeps its gas per
 * second there. Returns {profile, errors}: profile null when there are errors; a quiet profile is {name, quiet: true}.
 * Each error starts with "CHAIN_LOAD: ".
 * @param {string} value
 * @param {{slotS?: number|null, baseDir?: string}} [o]
 */
function readChainLoad(value, { slotS = null, baseDir = process.cwd() } = {}) {
  const fail = (errors) => ({ profile: null, errors: errors.map((e) => `CHAIN_LOAD: ${e}`) });
  const v = String(value ?? '').trim();
  if (!v) return fail([`empty: expected one of ${Object.keys(BUILT_IN).join(', ')} or a profile file (.yml)`]);
  const builtIn = BUILT_IN[v];
  if (builtIn && builtIn.quiet) return { profile: { name: v, source: 'built-in', quiet: true }, errors: [] };
  let spec;
  if (builtIn) spec = builtIn;
  else if (!/[/.]/.test(v)) {
    const near = closest(v, Object.keys(BUILT_IN));
    const names = Object.keys(BUILT_IN).join(', ');
    return fail([
      `unknown profile ${v}${near ? ` (did you mean ${near}?)` : ''}; expected one of ${names}, or a path to a profile file (.yml)`,
    ]);
  } else {
    const read = readFile(v, baseDir);
    if (read.errors.length) return fail(read.errors);
    spec = read.spec;
  }
  const { profile, errors } = atSlot(builtIn ? v : spec.source, spec, slotS);
  return errors.length ? fail(errors) : { profile, errors: [] };
}

module.exports = {
  readChainLoad,
  chainNeeds,
  BUILT_IN,
  KINDS,
  MAINNET_MIX,
  MAINNET_GAS_LIMIT,
  HEAVY_SHARE,
  FILE_KEYS,
  FEED_SENDERS,
  lineOf,
};
