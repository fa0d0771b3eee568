'use strict';
// Creates the history a workload needs on a fresh dev chain: funded accounts,
// value transfers spread over several blocks, and a contract whose calls emit
// logs. Signing goes through ethers, as a wallet would.

const { ethers } = require('ethers');
const { rpcCall } = require('../../util/rpc');
const { sleep } = require('../../util/time');
const LOGGER = require('./contracts/Logger.json');

// Transfers and calls are sent in rounds (HISTORY_BLOCKS, 8 by default), each one mined before the next is sent, so
// they land in several blocks; on a dev chain mining a block a second, each round costs about a second.
const ROUNDS = 8;

/** Deterministic wallets: the same SEED gives the same addresses on every run. */
function historyWallets(seed, count) {
  return Array.from({ length: count }, (_, i) => new ethers.Wallet(ethers.id(`chainperf:${seed}:${i}`)));
}

/** Waits until every transaction is in a block that `url` has; a reverted one is an error (what: whose it is). */
async function waitForReceipts(url, hashes, { rpc, signal, timeoutMs = 60000, what = 'history' }) {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(hashes);
  const receipts = new Map();
  while (pending.size) {
    for (const h of [...pending]) {
      const r = await rpc(url, 'eth_getTransactionReceipt', [h], { signal });
      if (r) {
        if (r.status !== '0x1') throw new Error(`${what} transaction ${h} reverted`);
        receipts.set(h, r);
        pending.delete(h);
      }
    }
    if (!pending.size) break;
    if (Date.now() > deadline)
      throw new Error(`${pending.size} ${what} transactions not mined after ${timeoutMs / 1000} s`);
    await sleep(200, signal);
  }
  return receipts;
}

/**
 * Who pays for the history: the chain's first unlocked account (eth_accounts,
 * the node signs), or, for a client whose dev chain unlocks none (besu,
 * erigon), the funded dev account whose well-known key its module gives (devKey,
 * signed here). Returns its address and send(tx) resolving the transaction hash.
 */
async function funder(url, { rpc, devKey, fee, signal }) {
  if (devKey) {
    const wallet = new ethers.Wallet(devKey);
    let nonce = Number(await rpc(url, 'eth_getTransactionCount', [wallet.address, 'pending'], { signal }));
    const send = async (tx) =>
      sendRaw(rpc, url, await wallet.signTransaction({ ...tx, ...fee, nonce: nonce++ }), signal);
    return { address: wallet.address, send };
  }
  const [dev] = await rpc(url, 'eth_accounts', [], { signal });
  if (!dev) throw new Error('the dev chain has no unlocked account to fund history from');
  // Nonces given, not left to the node: geth's pool promotes a new transaction in the background, so the pending
  // nonce it would fill in can still be the last one's on a loaded machine ("replacement transaction underpriced").
  let nonce = Number(await rpc(url, 'eth_getTransactionCount', [dev, 'pending'], { signal }));
  const send = (tx) => {
    const call = {
      from: dev,
      to: tx.to,
      gas: ethers.toQuantity(tx.gasLimit),
      data: tx.data,
      nonce: ethers.toQuantity(nonce++),
    };
    if (tx.value !== undefined) call.value = ethers.toQuantity(tx.value);
    return rpc(url, 'eth_sendTransaction', [call], { signal }); // the node signs with its unlocked account
  };
  return { address: dev, send };
}

/**
 * eth_sendRawTransaction, resolving the transaction's hash. A send that is retried after the node had received it
 * (the answer was lost on the way back) is told "already known": that is the transaction sent.
 */
async function sendRaw(rpc, url, signed, signal) {
  try {
    return await rpc(url, 'eth_sendRawTransaction', [signed], { signal });
  } catch (err) {
    if (/already known/i.test(err.message)) return ethers.keccak256(signed);
    throw err;
  }
}

/**
 * @param {string} url JSON-RPC endpoint (http(s):// or ws(s)://) of a dev chain with an unlocked, funded account, or
 * whose funded account's key is devKey
 * @param {{accounts:number, transfers:number, calls:number, seed:number, rounds?:number, devKey?:string,
 * signal?:AbortSignal, log?:Function}} opts rounds: the blocks the transfers and calls are spread over
 * @returns {Promise<{contract:string, accounts:string[], txs:number, rounds:number, first_round_block:number|null}>}
 *   first_round_block: the highest block holding a transfer or call of the first round
 */
async function createHistory(
  url,
  { accounts, transfers, calls, seed, rounds = ROUNDS, devKey, signal, log = () => {}, rpc = rpcCall },
) {
  const chainId = Number(await rpc(url, 'eth_chainId', [], { signal }));
  const wallets = historyWallets(seed, accounts);
  const fee = {
    maxFeePerGas: ethers.parseUnits('20', 'gwei'),
    maxPriorityFeePerGas: ethers.parseUnits('1', 'gwei'),
    chainId,
    type: 2,
  };
  const dev = await funder(url, { rpc, devKey, fee, signal });

  log(`creating history: funding ${accounts} accounts, deploying the Logger contract`);
  const funding = [];
  for (const w of wallets) {
    funding.push(await dev.send({ to: w.address, value: ethers.parseEther('100'), gasLimit: 21000 }));
  }
  const factory = new ethers.ContractFactory(LOGGER.abi, LOGGER.bytecode);
  const deployTx = await factory.getDeployTransaction();
  const deployHash = await dev.send({ data: deployTx.data, gasLimit: 1_000_000 });
  const receipts = await waitForReceipts(url, [...funding, deployHash], { rpc, signal });
  const contract = ethers.getAddress(receipts.get(deployHash).contractAddress);

  const logger = new ethers.Interface(LOGGER.abi);
  const nonces = wallets.map(() => 0);
  let sent = funding.length + 1;
  let firstRound = null; // the block by which the first round was mined (its transfers may land before its calls)
  for (let round = 0; round < rounds; round++) {
    const hashes = [];
    const nTransfers = share(transfers, round, rounds);
    const nCalls = share(calls, round, rounds);
    for (let i = 0; i < nTransfers + nCalls; i++) {
      const k = (round * 7919 + i) % wallets.length;
      const tx =
        i < nTransfers
          ? {
              to: wallets[(k + 1 + i) % wallets.length].address,
              value: ethers.parseEther('0.001') + BigInt(i),
              gasLimit: 21000,
            }
          : {
              to: contract,
              data: logger.encodeFunctionData('ping', [ethers.id(`ping:${round}:${i}`)]),
              gasLimit: 100_000,
            };
      const signed = await wallets[k].signTransaction({ ...tx, ...fee, nonce: nonces[k]++ });
      hashes.push(await sendRaw(rpc, url, signed, signal));
    }
    const mined = await waitForReceipts(url, hashes, { rpc, signal });
    if (round === 0 && hashes.length) firstRound = Math.max(...[...mined.values()].map((r) => Number(r.blockNumber)));
    sent += hashes.length;
    log(`creating history: round ${round + 1} of ${rounds} mined (${sent} transactions so far)`);
  }
  const accountsUsed = [dev.address, ...wallets.map((w) => w.address)];
  return { contract, accounts: accountsUsed, txs: sent, rounds, first_round_block: firstRound };
}

/** Splits total into `rounds` near-equal parts; part `round`. */
function share(total, round, rounds) {
  return Math.floor(total / rounds) + (round < total % rounds ? 1 : 0);
}

module.exports = { createHistory, historyWallets, funder, waitForReceipts };
