'use strict';
// A stand-in Ethereum chain for the chain traffic feed's tests: the JSON-RPC
// methods the feed calls, served by any number of "nodes" (HTTP servers) over
// one chain. It takes signed type-2 transactions in nonce order per sender,
// makes a block of everything pending every blockMs, and gives each
// transaction the gas gasOf(tx) says. It records which node got which
// transaction.

const http = require('node:http');
const { ethers } = require('ethers');

const hex = (n) => `0x${BigInt(n).toString(16)}`;

function chainState({ gasOf, funder, gasLimit }) {
  return {
    gasOf,
    gasLimit,
    balances: new Map([[funder.toLowerCase(), 10n ** 30n]]),
    nonces: new Map(),
    pool: [],
    blocks: [{ number: 0, hash: ethers.id('block:0'), timestamp: 1, gasUsed: 0, txs: [], receipts: [] }],
    receipts: new Map(),
    sent: [], // {tx, node}
  };
}

/** Makes a block of every pending transaction. */
function mine(c) {
  const number = c.blocks.length;
  const block = {
    number,
    hash: ethers.id(`block:${number}`),
    timestamp: number + 1,
    gasUsed: 0,
    txs: [],
    receipts: [],
  };
  for (const tx of c.pool.splice(0)) {
    const gas = c.gasOf(tx);
    block.gasUsed += gas;
    block.txs.push(tx);
    if (tx.to && tx.value) {
      const to = tx.to.toLowerCase();
      c.balances.set(to, (c.balances.get(to) || 0n) + tx.value);
    }
    const receipt = {
      transactionHash: tx.hash,
      blockNumber: hex(number),
      gasUsed: hex(gas),
      status: '0x1',
      contractAddress: tx.to ? null : ethers.getCreateAddress({ from: tx.from, nonce: tx.nonce }),
    };
    block.receipts.push(receipt);
    c.receipts.set(tx.hash, receipt);
  }
  c.blocks.push(block);
}

function blockOf(c, tag) {
  const n = tag === 'latest' ? c.blocks.length - 1 : Number(tag);
  return c.blocks[n] || null;
}

const METHODS = {
  eth_getBalance: (c, [a]) => hex(c.balances.get(a.toLowerCase()) || 0n),
  eth_getTransactionCount: (c, [a]) => hex(c.nonces.get(a.toLowerCase()) || 0),
  eth_blockNumber: (c) => hex(c.blocks.length - 1),
  eth_getTransactionReceipt: (c, [h]) => c.receipts.get(h) || null,
  eth_getBlockReceipts: (c, [tag]) => blockOf(c, tag).receipts,
  eth_getBlockByNumber: (c, [tag]) => {
    const b = blockOf(c, tag);
    return (
      b && {
        number: hex(b.number),
        hash: b.hash,
        timestamp: hex(b.timestamp),
        gasUsed: hex(b.gasUsed),
        gasLimit: hex(c.gasLimit),
        baseFeePerGas: hex(10n ** 9n),
        transactions: b.txs.map((t) => t.hash),
      }
    );
  },
  eth_sendRawTransaction: (c, [raw], node) => {
    const tx = ethers.Transaction.from(raw);
    if (tx.type !== 2 || tx.chainId !== 1337n) throw new Error(`not a type-2 transaction of chain 1337`);
    const from = tx.from.toLowerCase();
    const want = c.nonces.get(from) || 0;
    if (tx.nonce !== want) throw new Error(`nonce ${tx.nonce} of ${from}: expected ${want}`);
    c.nonces.set(from, want + 1);
    c.pool.push(tx);
    c.sent.push({ tx, node });
    return tx.hash;
  },
};

/**
 * Starts `nodes` JSON-RPC servers over one chain mining every blockMs; resolves {urls, chain, close}.
 * @param {{nodes?: number, blockMs?: number, gasOf: (tx: any) => number, funder: string, gasLimit?: number}} o
 */
async function startFakeChain({ nodes = 2, blockMs = 200, gasOf, funder, gasLimit = 60_000_000 }) {
  const chain = chainState({ gasOf, funder, gasLimit });
  const servers = [];
  for (let i = 0; i < nodes; i++) {
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const { id, method, params } = JSON.parse(body);
        try {
          if (!METHODS[method]) throw new Error(`the fake chain has no ${method}`);
          res.end(JSON.stringify({ jsonrpc: '2.0', id, result: METHODS[method](chain, params, i) }));
        } catch (err) {
          res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: err.message } }));
        }
      });
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
  }
  const timer = setInterval(() => mine(chain), blockMs);
  return {
    urls: servers.map((s) => `http://127.0.0.1:${s.address().port}`),
    chain,
    close: async () => {
      clearInterval(timer);
      for (const s of servers) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    },
  };
}

module.exports = { startFakeChain };
