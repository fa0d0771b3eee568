// @ts-check
'use strict';
// A Substrate node's part in a local network (NETWORK_NODES): the flags that
// make it a member (its libp2p node key, private addresses allowed, the peers
// it keeps dialling), the multiaddress other nodes dial it at, and the
// counters of its metrics page that say what crossed its network. Shared by
// the Substrate clients that network (polkadot-omni-node).
//
// Blocks: one node authors (network-1, a block every DEV_BLOCK_TIME_S, the
// dev mode's own timer); every other node imports them from its peers over
// libp2p (block announcements, then block requests), as a node of a live
// chain does. A member that must not author is given a block time no run
// reaches (NEVER_MS).

const crypto = require('node:crypto');
const { base58Encode } = require('@polkadot/util-crypto');
const { rpcCall } = require('../util/rpc');
const { countBlocks, startSubstrateFeed } = require('../chains/substrate/network-traffic');
const { httpUrl } = require('../chains/substrate/url');

/** A block time no run reaches (ten years): the dev mode's timer never fires on a member that only imports. */
const NEVER_MS = 10 * 365 * 24 * 3600 * 1000;

/** PKCS#8 DER prefix of an Ed25519 private key (RFC 8410); the 32-byte seed follows. */
const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The libp2p PeerId of a node key (the --node-key hex: an Ed25519 secret): the identity multihash of the protobuf
 * PublicKey {Type: Ed25519, Data: the public key}, in base58btc ("12D3KooW…").
 * @param {string} nodeKeyHex
 */
function peerId(nodeKeyHex) {
  const seed = Buffer.from(nodeKeyHex.replace(/^0x/, ''), 'hex');
  if (seed.length !== 32) throw new Error('a libp2p node key is 32 bytes');
  const priv = crypto.createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, seed]), format: 'der', type: 'pkcs8' });
  const pub = crypto.createPublicKey(priv).export({ format: 'der', type: 'spki' }).subarray(-32);
  const proto = Buffer.concat([Buffer.from([0x08, 0x01, 0x12, 0x20]), pub]); // field 1: Ed25519 (1), field 2: 32 bytes
  return base58Encode(Buffer.concat([Buffer.from([0x00, proto.length]), proto])); // multihash: identity, length
}

/** The multiaddress a node listens at on this machine's loopback. */
const multiaddr = (nodeKeyHex, port, host = '127.0.0.1') => `/ip4/${host}/tcp/${port}/p2p/${peerId(nodeKeyHex)}`;

/**
 * A member's flags: its node key (it listens on the loopback: substrate-cli.js), private addresses allowed (the network's addresses are
 * loopback ones), the peers it keeps connected (reserved: for a network node, the node under test and the network
 * nodes before it); dev-mode authoring only where `author` is set.
 * @param {{nodeKeyHex: string, reserved?: string[], author?: boolean, blockTimeMs: number}} m
 */
function memberArgs({ nodeKeyHex, reserved = [], author = false, blockTimeMs }) {
  return [
    '--node-key',
    nodeKeyHex,
    '--allow-private-ip',
    ...(reserved.length ? ['--reserved-nodes', ...reserved] : []),
    '--dev-block-time',
    String(author ? blockTimeMs : NEVER_MS),
  ];
}

/** A node's answer to an RPC call over HTTP (a Substrate node serves HTTP and WebSocket on one port). */
const call = (url, method, params = [], timeoutMs = 5000) => rpcCall(httpUrl(url), method, params, { timeoutMs });

/**
 * A Substrate client's part in a local network (src/contracts.js AuthoringPeer): its own authoring makes the blocks,
 * its counters are Substrate's own metrics, its peers and head are read with system_health and chain_getHeader.
 * @type {Omit<import('../contracts').AuthoringPeer, 'peerCommand'>}
 */
const substrateNetwork = {
  blocks: 'authored',
  protocol: 'libp2p (Substrate: block announcements and requests, transactions; reserved peers, no discovery)',
  counters: {
    p2pIn: 'substrate_sub_libp2p_network_bytes_total{direction="in"}',
    p2pOut: 'substrate_sub_libp2p_network_bytes_total{direction="out"}',
    gossipIn: [],
    gossipKnown: [],
  },
  peerSource: 'system_health',
  peerCount: async (url) => (await call(url, 'system_health', [], 2000)).peers,
  bestBlock: async (url) => Number.parseInt((await call(url, 'chain_getHeader')).number, 16),
  answers: (url) => call(url, 'system_health', [], 2000),
  inboundPeers: (peers) => peers - Math.floor(peers / 2), // --in-peers: the larger half of PEERS (substrate-cli.js)
  countBlocks,
  startFeed: startSubstrateFeed,
  multiaddr,
  memberArgs,
};

module.exports = { substrateNetwork, peerId, multiaddr, memberArgs, NEVER_MS };
