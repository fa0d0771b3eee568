'use strict';
// What the Substrate workload does: operations a wallet or an explorer
// performs through @polkadot/api, each with parameters drawn from the
// harvested pool. A mix (workloads/dot-*.yml) weights operations; the
// requests counted are the JSON-RPC calls each operation makes (one or
// several), recorded by the processor where @polkadot/api sends them.
//
// pickParams is pure (the unit tests call it with a fixed pool); run is what
// a virtual user executes.

const pick = (list, r) => list[Math.floor(r() * list.length)];
// On a STATE profile, an account is drawn over all of the state's accounts for each request (state.js); else from the
// harvest.
// (Required when first used: resolving a scenario loads this module, and needs no crypto.)
const spaces = new WeakMap(); // pool -> its account drawer
function account(pool, r) {
  const space = pool.state_space;
  if (!space) return pick(pool.accounts, r).address;
  let d = spaces.get(pool);
  if (!d) {
    const { stateAccountHex } = require('./state-accounts');
    const draw = require('../../util/draws').indexDrawer(space.accounts, space.distribution);
    d = (rand) => stateAccountHex(draw(rand));
    spaces.set(pool, d);
  }
  return d(r);
}

/** The operations, in the order the docs list them. `needs`: pool entries it draws from. */
const OPS = {
  chain_getBlockHash: {
    doc: 'api.rpc.chain.getBlockHash(n) for a harvested block number',
    needs: ['blocks'],
    params: (pool, r) => ({ number: pick(pool.blocks, r).number }),
    run: (api, p) => api.rpc.chain.getBlockHash(p.number),
  },
  chain_getBlock: {
    doc: "api.rpc.chain.getBlock(hash) of a harvested recent block (@polkadot/api asks for the block's runtime version to decode it, which a pruning node keeps for its last 256 blocks only)",
    needs: ['state_blocks'],
    params: (pool, r) => ({ hash: pick(pool.state_blocks, r).hash }),
    run: (api, p) => api.rpc.chain.getBlock(p.hash),
  },
  chain_getHeader: {
    doc: "api.rpc.chain.getHeader(hash) of a harvested recent block (@polkadot/api asks for the block's runtime version to decode it, which a pruning node keeps for its last 256 blocks only)",
    needs: ['state_blocks'],
    params: (pool, r) => ({ hash: pick(pool.state_blocks, r).hash }),
    run: (api, p) => api.rpc.chain.getHeader(p.hash),
  },
  'query.system.account': {
    doc: 'api.query.system.account(address) at the best block (state_getStorage) for a harvested account (on a STATE profile: any of its accounts)',
    needs: ['accounts'],
    params: (pool, r) => ({ address: account(pool, r) }),
    run: (api, p) => api.query.system.account(p.address),
  },
  'at.system.account': {
    doc: 'historical: (await api.at(hash)).query.system.account(address) at a harvested block',
    needs: ['state_blocks', 'accounts'],
    params: (pool, r) => ({ hash: pick(pool.state_blocks, r).hash, address: account(pool, r) }),
    run: async (api, p) => (await api.at(p.hash)).query.system.account(p.address),
  },
  'at.system.events': {
    doc: 'historical: (await api.at(hash)).query.system.events() at a harvested block',
    needs: ['state_blocks'],
    params: (pool, r) => ({ hash: pick(pool.state_blocks, r).hash }),
    run: async (api, p) => (await api.at(p.hash)).query.system.events(),
  },
  state_getRuntimeVersion: {
    doc: 'api.rpc.state.getRuntimeVersion() at the best block',
    needs: [],
    params: () => ({}),
    run: (api) => api.rpc.state.getRuntimeVersion(),
  },
  payment_queryInfo: {
    doc: "api.rpc.payment.queryInfo(signed transferKeepAlive) (raw: the runtime's answer, not decoded, so old and new weight types both pass)",
    needs: ['payment_extrinsics'],
    params: (pool, r) => ({ extrinsic: pick(pool.payment_extrinsics, r) }),
    run: (api, p) => api.rpc.payment.queryInfo.raw(p.extrinsic),
  },
  chain_subscribeNewHeads: {
    doc: 'api.rpc.chain.subscribeNewHeads: the virtual user keeps the subscription open (closed loop: until it ends; open loop: SUBSCRIPTION_HOLD_MS) and counts the heads it receives',
    needs: [],
    params: () => ({}),
    subscription: true,
  },
  'balances.transferKeepAlive': {
    doc: 'write: a signed balances.transferKeepAlive from a funded dev account the virtual user holds, to a harvested account, waiting for inclusion in a block',
    needs: ['signers', 'accounts'],
    params: (pool, r) => ({
      dest: pick(pool.accounts, r).address,
      amount: String(1_000_000_000n + BigInt(Math.floor(r() * 1e6))),
    }),
    write: true,
  },
};

const METHODS = Object.keys(OPS);

/** Open loop: how long a virtual user holds the subscription it opened. */
const SUBSCRIPTION_HOLD_MS = 5000;

/** Parameters for one operation, drawn with the random source r. */
function pickParams(op, pool, r) {
  const def = OPS[op];
  if (!def) throw new Error(`no Substrate operation ${op}`);
  return def.params(pool, r);
}

/** Names every operation of the mix whose parameters the pool cannot supply. */
function missingForMix(pool, ops) {
  const problems = [];
  for (const op of ops) {
    const lacking = ((OPS[op] && OPS[op].needs) || []).filter(
      (k) => !pool[k] || (Array.isArray(pool[k]) && pool[k].length === 0),
    );
    if (lacking.length)
      problems.push(
        `${op} needs ${lacking.join(', ')}${lacking.includes('signers') ? ' (funded dev accounts: a dev chain chainperf started)' : ''}`,
      );
  }
  return problems;
}

module.exports = { OPS, METHODS, pickParams, missingForMix, SUBSCRIPTION_HOLD_MS };
