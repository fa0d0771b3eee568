'use strict';
// Accounts for the Ethereum write workloads (WORKLOAD=eth-transfers,
// eth-token-transfers): one per virtual user, derived from SEED so every run
// signs from the same addresses, funded by the dev chain's unlocked account
// when they hold less than they may spend.

const { ethers } = require('ethers');
const { rpcCall } = require('../../util/rpc');
const { sleep } = require('../../util/time');

const FUND = ethers.parseEther('10');
const LOW = ethers.parseEther('1');

/** The private key of writer i: public knowledge, like a dev chain's well-known accounts. */
const writerKey = (seed, i) => ethers.id(`chainperf:writer:${seed}:${i}`);

/**
 * Funds `count` writer accounts from the node's first unlocked account.
 * @returns {Promise<{seed:number, count:number, addresses:string[], funded:number}>}
 */
async function prepareWrites(url, { count, seed, signal, log = () => {}, rpc = rpcCall }) {
  const addresses = Array.from({ length: count }, (_, i) => new ethers.Wallet(writerKey(seed, i)).address);
  const [dev] = await rpc(url, 'eth_accounts', [], { signal });
  const low = [];
  for (const a of addresses) if (BigInt(await rpc(url, 'eth_getBalance', [a, 'latest'], { signal })) < LOW) low.push(a);
  if (low.length && !dev)
    throw new Error(
      `${low.length} writer accounts need funds and the node has no unlocked account to fund them from (the write workloads need a dev chain)`,
    );
  if (low.length) log(`write workload: funding ${low.length} of ${count} writer accounts`);
  const hashes = [];
  for (const to of low)
    hashes.push(
      await rpc(url, 'eth_sendTransaction', [{ from: dev, to, value: ethers.toQuantity(FUND), gas: '0x5208' }], {
        signal,
      }),
    );
  const deadline = Date.now() + 60000;
  for (const h of hashes) {
    while (!(await rpc(url, 'eth_getTransactionReceipt', [h], { signal }))) {
      if (Date.now() > deadline) throw new Error('funding the writer accounts: not mined after 60 s');
      await sleep(200, signal);
    }
  }
  return { seed, count, addresses, funded: low.length };
}

module.exports = { prepareWrites, writerKey };
