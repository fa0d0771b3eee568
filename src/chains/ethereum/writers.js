'use strict';
// Accounts for the Ethereum write workloads (WORKLOAD=eth-transfers,
// eth-token-transfers): one per virtual user, derived from SEED so every run
// signs from the same addresses, funded when they hold less than they may
// spend: by the dev chain's unlocked account, or on a network by its funded
// account's key through the node that builds its blocks.

const { ethers } = require('ethers');
const { rpcCall } = require('../../util/rpc');
const { funder, waitForReceipts } = require('./history');

const FUND = ethers.parseEther('10');
const LOW = ethers.parseEther('1');

/** The private key of writer i: public knowledge, like a dev chain's well-known accounts. */
const writerKey = (seed, i) => ethers.id(`chainperf:writer:${seed}:${i}`);

/**
 * Funds `count` writer accounts that hold less than they may spend: from the node's first unlocked account, or, on a
 * network (whose members have none) and on a client whose dev chain unlocks none, from the funded account whose key is
 * devKey, signed here and sent through fundUrl (the node that builds the network's blocks). Either way the funding is
 * awaited on `url`, the node the writes go to, so its users find their balance there.
 * @param {string} url the node under test
 * @param {{count: number, seed: number, devKey?: string, fundUrl?: string, signal?: AbortSignal, log?: Function,
 *   rpc?: Function}} o
 * @returns {Promise<{seed:number, count:number, addresses:string[], funded:number}>}
 */
async function prepareWrites(url, { count, seed, devKey, fundUrl, signal, log = () => {}, rpc = rpcCall }) {
  const addresses = Array.from({ length: count }, (_, i) => new ethers.Wallet(writerKey(seed, i)).address);
  const low = [];
  for (const a of addresses) if (BigInt(await rpc(url, 'eth_getBalance', [a, 'latest'], { signal })) < LOW) low.push(a);
  if (!low.length) return { seed, count, addresses, funded: 0 };
  const from = fundUrl || url;
  if (!devKey && !(await rpc(from, 'eth_accounts', [], { signal }))[0])
    throw new Error(
      `${low.length} writer accounts need funds and the node has no unlocked account to fund them from (the write workloads need a dev chain)`,
    );
  log(`write workload: funding ${low.length} of ${count} writer accounts${fundUrl ? ' through the network' : ''}`);
  const fee = {
    maxFeePerGas: ethers.parseUnits('20', 'gwei'),
    maxPriorityFeePerGas: ethers.parseUnits('1', 'gwei'),
    chainId: Number(await rpc(from, 'eth_chainId', [], { signal })),
    type: 2,
  };
  const dev = await funder(from, { rpc, devKey, fee, signal });
  const hashes = [];
  for (const to of low) hashes.push(await dev.send({ to, value: FUND, gasLimit: 21000 }));
  await waitForReceipts(url, hashes, { rpc, signal, what: 'writer funding' });
  return { seed, count, addresses, funded: low.length };
}

module.exports = { prepareWrites, writerKey };
