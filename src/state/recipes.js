'use strict';
// The two ways a STATE profile's data directory is built (state/build.js picks
// one by the geth version):
// - written (geth 1.16.7): statewriter writes the whole genesis state, the
//   fill's accounts and slots included, into a fresh data directory; geth --dev
//   on it then sends the history;
// - through the node (any other version): geth init of a genesis holding the
//   profile's accounts and slots, the history, then StateStore calls that add
//   the fill's slots and accounts, hundreds a transaction.
// Either way, a state with a fill ends with the settling blocks (fill.js), so
// a node started on it holds small trie changes in memory, as before.

const fs = require('node:fs');
const path = require('node:path');
const { runWithProgress } = require('../install/progress');
const { rpcCall } = require('../util/rpc');
const P = require('./profiles');
const { dropGenesisSpec, writeGenesis } = require('./genesis');
const { startBuilder } = require('./builder-node');
const { fillState, sendHistory, settleLayers } = require('./fill');
const { ensureWriter, writeState } = require('./writer');

/**
 * geth --dev on the data directory: `before` on the new state, the history (a block a second), then on a node mining
 * as soon as transactions wait `fill` and the settling blocks. Returns the history and what `fill` returned.
 */
async function sendThrough(bin, { dataDir, engine, buildLog, profile, log, signal }, { before, fill }) {
  let node = await startBuilder(bin, dataDir, engine, buildLog, 1);
  try {
    if (before) await before(node.url);
    const history = await sendHistory(node.url, profile, { log, signal });
    if (history.transfers !== profile.transfers)
      throw new Error(`state history: ${history.transfers} transfers sent, not ${profile.transfers}`);
    await node.stop();
    node = await startBuilder(bin, dataDir, engine, buildLog, 0);
    const filled = await fill(node.url, history);
    if (profile.fill_slots + profile.fill_accounts) await settleLayers(node.url, { log, signal });
    return { history, fill: filled };
  } finally {
    await node.stop();
  }
}

/** The written state is the profile's: the genesis block's root, the last account, slot and fill account. */
async function spotChecks(url, profile, root, signal) {
  const call = (method, params) => rpcCall(url, method, params, { signal });
  const fail = (what) => {
    throw new Error(`state writer: ${what}`);
  };
  const genesis = await call('eth_getBlockByNumber', ['0x0', false]);
  if (genesis.stateRoot !== root) fail(`geth's genesis block has state root ${genesis.stateRoot}, not ${root}`);
  const last = profile.accounts - 1;
  const balance = BigInt(await call('eth_getBalance', [P.accountAddress(last), 'latest']));
  if (last >= 0 && balance !== 10n ** 18n + BigInt(last)) fail(`account ${last} holds ${balance} wei`);
  const slots = profile.slots + profile.fill_slots;
  const slot = slots && BigInt(await call('eth_getStorageAt', [P.STORAGE_CONTRACT, P.slotKey(slots - 1), 'latest']));
  if (slots && slot !== BigInt(slots)) fail(`slot ${slots - 1} holds ${slot}, not ${slots}`);
  const filled = profile.accounts + profile.transfers + profile.fill_accounts - 1;
  if (profile.fill_accounts && BigInt(await call('eth_getBalance', [P.accountAddress(filled), 'latest'])) !== 1n)
    fail(`fill account ${filled} does not hold 1 wei`);
  if ((await call('eth_getCode', [P.STORAGE_CONTRACT, 'latest'])) !== P.STORAGE_CODE.toLowerCase())
    fail(`the storage contract ${P.STORAGE_CONTRACT} does not hold StateStore's code`);
}

/** The state written by statewriter, then the history through geth --dev. */
async function written(bin, { name, tmp, dataDir, version, engine, buildLog, profile, log, signal }) {
  const writer = await ensureWriter(version, { log, signal });
  const genesis = path.join(tmp, 'base.json');
  writeGenesis(bin, genesis, { accounts: 0, slots: 0 }, log); // the dev genesis, the signers, StateStore's code
  const w = await writeState(writer.bin, profile, { name, dataDir, engine, genesis, log, signal });
  fs.rmSync(genesis);
  const { history, fill } = await sendThrough(
    bin,
    { dataDir, engine, buildLog, profile, log, signal },
    {
      before: (url) => spotChecks(url, profile, w.root, signal),
      fill: async (url, h) => ({ last_block: h.last_block, seconds: w.seconds, transactions: 0 }),
    },
  );
  return { history, fill, writer: { root: w.root, seconds: w.seconds, version: writer.version } };
}

/** geth init of the profile's genesis, the history, then the fill through the node. */
async function throughNode(bin, { tmp, dataDir, engine, buildLog, profile, log, signal }) {
  const genesis = path.join(tmp, 'genesis.json');
  writeGenesis(bin, genesis, profile, log);
  await runWithProgress(bin, ['init', '--datadir', dataDir, '--db.engine', engine, genesis], {
    label: 'state geth init',
    step: 'state-geth-init',
    log,
    signal,
  });
  fs.rmSync(genesis);
  await dropGenesisSpec(bin, dataDir, log, signal);
  const fill = async (url, history) => {
    const slots = await fillState(url, 'slots', profile.slots, profile.fill_slots, { log, signal });
    const firstAccount = profile.accounts + history.transfers;
    const accounts = await fillState(url, 'accounts', firstAccount, profile.fill_accounts, { log, signal });
    return {
      last_block: Number(await rpcCall(url, 'eth_blockNumber', [], { signal })),
      seconds: slots.seconds + accounts.seconds,
      transactions: slots.transactions + accounts.transactions,
    };
  };
  const { history, fill: filled } = await sendThrough(
    bin,
    { dataDir, engine, buildLog, profile, log, signal },
    { fill },
  );
  return { history, fill: filled, writer: null };
}

module.exports = { written, throughNode, spotChecks };
