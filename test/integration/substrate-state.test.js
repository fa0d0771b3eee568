'use strict';
// Substrate STATE profiles on chopsticks (installed by .ci/run): a real
// runtime reads the accounts the state spec writes, with the balances
// chainperf derives, and the total issuance that matches them. STATE=small
// end to end on polkadot-omni-node is test/omni-node (npm run test:omni-node):
// building that node takes longer than .ci/run can spend.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { tmpDir } = require('../helpers');
const { freePorts } = require('../../src/util/net');
const { ensureChainSpec } = require('../../src/chains/substrate/specs');
const { fundedSpec } = require('../../src/chains/substrate/accounts');
const { writeStateSpec } = require('../../src/chains/substrate/state');
const { stateAccountHex, stateIssuance, STATE_FREE } = require('../../src/chains/substrate/state-accounts');
const chopsticks = require('../../src/clients/chopsticks');

const log = (m) => process.stderr.write(`${m}\n`);

describe('Substrate state spec read by a real runtime (chopsticks)', () => {
  let child;
  let api;
  let issuedBefore;
  const n = 3000;

  before(async function () {
    this.timeout(300000);
    const dir = tmpDir();
    const src = await ensureChainSpec('bridge-hub-polkadot', log);
    const runSpec = path.join(dir, 'run.json');
    await fundedSpec(src, runSpec, { accounts: 4 });
    const { TOTAL_ISSUANCE } = require('../../src/chains/substrate/accounts');
    const { u8aToBn, hexToU8a } = require('@polkadot/util');
    issuedBefore = BigInt(
      u8aToBn(hexToU8a(JSON.parse(fs.readFileSync(runSpec, 'utf8')).genesis.raw.top[TOTAL_ISSUANCE]), {
        isLe: true,
      }).toString(),
    );
    const buildSpec = path.join(dir, 'build.json');
    await writeStateSpec(runSpec, buildSpec, n);
    const s = { CLIENT_VERSION: chopsticks.defaults.CLIENT_VERSION, CLIENT_BIN: '' };
    const bin = await chopsticks.ensureBinary(s, log);
    const ports = await freePorts(['rpc']);
    const cmd = chopsticks.command(s, { ports, chainSpec: buildSpec });
    child = spawn(bin, cmd.args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-2000);
    });
    const { ApiPromise, WsProvider } = require('@polkadot/api');
    const deadline = Date.now() + 240000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`chopsticks exited: ${err}`);
      try {
        const provider = new WsProvider(cmd.rpcUrl, false);
        await provider.connect();
        api = await ApiPromise.create({ provider, throwOnConnect: true, noInitWarn: true });
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`chopsticks did not answer in 240 s: ${err}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  });

  after(async () => {
    if (api) await api.disconnect();
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('state account i holds STATE_FREE + i, from the first to the last', async () => {
    for (const i of [0, 1, 1234, n - 1]) {
      const info = await api.query.system.account(stateAccountHex(i));
      assert.equal(info.data.free.toBigInt(), STATE_FREE + BigInt(i), `account ${i}`);
      assert.equal(info.providers.toNumber(), 1);
    }
    const none = await api.query.system.account(stateAccountHex(n));
    assert.equal(none.data.free.toBigInt(), 0n, 'account n is not in the state');
  });

  it("the total issuance is the spec's plus the state accounts' balances", async () => {
    assert.equal((await api.query.balances.totalIssuance()).toBigInt(), issuedBefore + stateIssuance(n));
  });
});
