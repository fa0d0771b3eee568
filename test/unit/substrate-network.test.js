'use strict';
// A Substrate network's pieces that need no node: a node key's libp2p PeerId
// (the well-known vectors of Substrate's docs: keys 1 and 2 are Alice's and
// Bob's bootnodes), the member flags, the labelled counters of its metrics
// page, signed extrinsics told from inherents, and what a scenario may ask.

const assert = require('node:assert/strict');
const { peerId, multiaddr, memberArgs, NEVER_MS } = require('../../src/clients/substrate-network');
const omni = require('../../src/clients/polkadot-omni-node');
const { sumCounters } = require('../../src/network/watch');
const { isSigned } = require('../../src/chains/substrate/network-traffic');
const { resolveScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

const key = (n) => n.toString(16).padStart(64, '0');

describe('a Substrate network member', () => {
  it("derives a node key's PeerId as libp2p does (Ed25519, identity multihash, base58)", () => {
    assert.equal(peerId(key(1)), '12D3KooWEyoppNCUx8Yx66oV9fJnriXwCcXwDDUA2kj6vnc6iDEp');
    assert.equal(peerId(key(2)), '12D3KooWHdiAxVd8uMQR1hGWXccidmfCwLqcMpGwR6QcTP6QRMuD');
    assert.equal(
      multiaddr(key(1), 30333),
      '/ip4/127.0.0.1/tcp/30333/p2p/12D3KooWEyoppNCUx8Yx66oV9fJnriXwCcXwDDUA2kj6vnc6iDEp',
    );
    assert.throws(() => peerId('abcd'), /32 bytes/);
  });

  it('authors only where asked: every other member gets a block time no run reaches', () => {
    const author = memberArgs({ nodeKeyHex: key(1), author: true, blockTimeMs: 2000 });
    const follower = memberArgs({ nodeKeyHex: key(2), reserved: ['/ip4/127.0.0.1/tcp/1/p2p/x'], blockTimeMs: 2000 });
    assert.equal(author[author.indexOf('--dev-block-time') + 1], '2000');
    assert.equal(follower[follower.indexOf('--dev-block-time') + 1], String(NEVER_MS));
    assert.ok(NEVER_MS > 365 * 24 * 3600 * 1000);
    assert.deepEqual(follower.slice(follower.indexOf('--reserved-nodes'), follower.indexOf('--reserved-nodes') + 2), [
      '--reserved-nodes',
      '/ip4/127.0.0.1/tcp/1/p2p/x',
    ]);
    assert.ok(!author.includes('--reserved-nodes'));
  });

  it("omni-node's command: a lone node authors; a member imports, with its node key; a network node has its own peer slots", () => {
    const s = {
      PEERS: 4,
      DB_ENGINE: 'rocksdb',
      DB_CACHE_MB: 1024,
      TRIE_CACHE_MB: 512,
      DEV_BLOCK_TIME_S: 2,
      CONCURRENCY: 8,
    };
    const where = { dataDir: '/d', chainSpec: 'spec.json', ports: { rpc: 1, metrics: 2, p2p: 3 } };
    const flag = (args, f) => args[args.indexOf(f) + 1];
    const lone = omni.command(s, where).args;
    assert.equal(flag(lone, '--dev-block-time'), '2000');
    assert.ok(!lone.includes('--node-key'));
    const member = omni.command(s, { ...where, network: { nodeKeyHex: key(1) } }).args;
    assert.equal(flag(member, '--dev-block-time'), String(NEVER_MS));
    assert.equal(flag(member, '--node-key'), key(1));
    assert.equal(flag(member, '--in-peers'), '2');
    const peer = omni.network.peerCommand(s, { ...where, network: { nodeKeyHex: key(2), author: true } }).args;
    assert.equal(flag(peer, '--dev-block-time'), '2000');
    assert.equal(flag(peer, '--in-peers'), '25', "PEERS is the node under test's");
    assert.equal(flag(peer, '--db-cache'), '64');
  });
});

describe("a Substrate node's metrics and blocks", () => {
  it('sums every series of a counter that has the asked labels, and names a counter it lacks', () => {
    const page = [
      '# TYPE substrate_sub_libp2p_network_bytes_total counter',
      'substrate_sub_libp2p_network_bytes_total{direction="in",chain="x"} 1000',
      'substrate_sub_libp2p_network_bytes_total{direction="out",chain="x"} 300',
      'substrate_sub_libp2p_network_bytes_total{direction="in",chain="y"} 5',
      'p2p_ingress 7',
    ].join('\n');
    const missing = new Set();
    assert.equal(sumCounters(page, ['substrate_sub_libp2p_network_bytes_total{direction="in"}'], missing), 1005);
    assert.equal(sumCounters(page, ['substrate_sub_libp2p_network_bytes_total{direction="out"}'], missing), 300);
    assert.equal(sumCounters(page, ['p2p_ingress'], missing), 7);
    assert.equal(sumCounters(page, ['substrate_sub_libp2p_network_bytes_total{direction="sideways"}'], missing), 0);
    assert.deepEqual([...missing], ['substrate_sub_libp2p_network_bytes_total{direction="sideways"}']);
  });

  it('tells a signed extrinsic (version byte 0x84) from an inherent (0x04), past a one- or two-byte length', () => {
    assert.equal(isSigned('0x280403000b10e2a0f69501'), false); // timestamp.set: length 10, version 4
    assert.equal(isSigned(`0x4502${'84'}${'00'.repeat(144)}`), true); // length 145 (two bytes), signed
    assert.equal(isSigned(`0x4502${'04'}${'00'.repeat(144)}`), false);
  });
});

describe('NETWORK_NODES with a Substrate client', () => {
  let dir;
  beforeEach(() => {
    dir = tmpDir();
  });
  const errs = (text) =>
    resolveScenario(writeScenario(dir, 'n.env', `CHAIN=polkadot\nCLIENT=polkadot-omni-node\n${text}`), {
      env: {},
      cpuCount: 2,
      dockerEngine: null,
    }).errors.join('\n');

  it('takes the host runtime and SYNC=network; refuses what a Substrate network does not do yet, saying so', () => {
    assert.equal(errs('RUNTIME=host\nNETWORK_NODES=2\n'), '');
    assert.match(
      errs('RUNTIME=compose\nNETWORK_NODES=2\n'),
      /RUNTIME=compose .*not yet on a polkadot-omni-node network/,
    );
    assert.equal(errs('RUNTIME=host\nNETWORK_NODES=2\nSYNC=network\n'), '');
    assert.match(errs('RUNTIME=host\nNETWORK_NODES=2\nSTATE=small\n'), /STATE=small: not yet/);
    assert.match(errs('RUNTIME=host\nNETWORK_NODES=2\nBLOCK_DELIVERY=head\n'), /BLOCK_DELIVERY .*not yet/);
    assert.match(
      resolveScenario(
        writeScenario(dir, 'c.env', 'CHAIN=polkadot\nCLIENT=chopsticks\nRUNTIME=host\nNETWORK_NODES=2\n'),
        {
          env: {},
          cpuCount: 2,
          dockerEngine: null,
        },
      ).errors.join('\n'),
      /chopsticks is a development/,
    );
  });
});
