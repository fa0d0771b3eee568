'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { METHODS, paramsFor, LOGS_SPAN } = require('../../src/chains/ethereum/params');
const { missingForMix } = require('../../src/chains/ethereum/harvest');
const { seededRandom, weightedPicker } = require('../../src/util/random');
const { compileContract, CONTRACTS } = require('../../src/chains/ethereum/contracts/compile');
const { loadMix, buildScript } = require('../../src/workload/artillery');
const { WRITE_KINDS } = require('../../src/workload/writes');
const { SUB_KINDS } = require('../../src/workload/subscriptions');

const POOL = {
  chain_id: 1337,
  head: 500,
  blocks: [10, 20, 450],
  tx_hashes: [`0x${'ab'.repeat(32)}`],
  addresses: [`0x${'11'.repeat(20)}`],
  senders: [`0x${'11'.repeat(20)}`],
  contract: `0x${'22'.repeat(20)}`,
  call_data: ['0x2ddbd13a'],
  estimate_data: ['0x01'],
  storage_contract: `0x${'33'.repeat(20)}`,
  storage_slots: [`0x${'44'.repeat(32)}`],
};

describe('ethereum parameters', () => {
  it('every method draws parameters from the pool', () => {
    const r = seededRandom(1);
    for (const m of METHODS) {
      const p = paramsFor(m, POOL, r);
      assert.ok(Array.isArray(p), m);
    }
    const [block] = paramsFor('eth_getBlockByNumber', POOL, r);
    assert.ok(['0xa', '0x14', '0x1c2'].includes(block));
    const [filter] = paramsFor('eth_getLogs', POOL, () => 0.99);
    assert.equal(filter.address, POOL.contract);
    assert.ok(Number(filter.toBlock) <= POOL.head && Number(filter.toBlock) - Number(filter.fromBlock) < LOGS_SPAN);
  });

  it('the same seed draws the same sequence', () => {
    const draw = (seed) => {
      const r = seededRandom(seed);
      return Array.from({ length: 20 }, () => paramsFor('eth_getBlockByNumber', POOL, r)[0]);
    };
    assert.deepEqual(draw(7), draw(7));
    assert.notDeepEqual(draw(7), draw(8));
  });

  it('a weighted picker follows the weights', () => {
    const pick = weightedPicker({ a: 3, b: 1 });
    const r = seededRandom(3);
    const n = Array.from({ length: 20000 }, () => pick(r())).filter((x) => x === 'a').length;
    assert.ok(Math.abs(n / 20000 - 0.75) < 0.02, String(n));
  });

  it('names what a pool lacks for the mix', () => {
    const pool = { ...POOL, contract: null, tx_hashes: [] };
    assert.deepEqual(missingForMix(pool, ['eth_blockNumber', 'eth_call', 'eth_getTransactionReceipt']), [
      'eth_call needs contract',
      'eth_getTransactionReceipt needs tx_hashes',
    ]);
  });
});

describe('workloads', () => {
  it('the shipped mixes name only methods chainperf can parameterize', () => {
    const dir = path.join(__dirname, '..', '..', 'workloads');
    for (const f of fs.readdirSync(dir).filter((x) => x.startsWith('eth-') && x.endsWith('.yml'))) {
      // dot-*: test/unit/substrate.test.js
      for (const m of Object.keys(loadMix(f.slice(0, -4))))
        // tx.*, sub.*: the write and subscription workloads
        assert.ok(METHODS.includes(m) || WRITE_KINDS.includes(m) || SUB_KINDS.includes(m), `${f}: ${m}`);
    }
    assert.deepEqual(loadMix('method:eth_getLogs'), { eth_getLogs: 1 });
  });

  it('the default mix covers the ten methods of the first study', () => {
    assert.deepEqual(Object.keys(loadMix('eth-default')).sort(), [
      'eth_blockNumber',
      'eth_call',
      'eth_estimateGas',
      'eth_gasPrice',
      'eth_getBalance',
      'eth_getBlockByNumber',
      'eth_getCode',
      'eth_getLogs',
      'eth_getTransactionByHash',
      'eth_getTransactionReceipt',
    ]);
  });

  it('closed loop: CONCURRENCY users looping until the window closes; open loop: RATE arrivals each sending one request', () => {
    const closed = buildScript(
      { CONCURRENCY: 16, RAMP_S: 0, WORKLOAD: 'eth-default' },
      { processor: '/p.js', totalS: 30 },
    );
    assert.deepEqual(closed.config.phases, [{ duration: 1, arrivalCount: 16, name: 'closed loop' }]);
    assert.equal(closed.scenarios[0].flow[0].whileTrue, 'keepGoing');
    const open = buildScript({ RATE: 500, RAMP_S: 5, WORKLOAD: 'eth-default' }, { processor: '/p.js', totalS: 30 });
    assert.deepEqual(
      open.config.phases.map((p) => [p.duration, p.arrivalRate, p.rampTo]),
      [
        [5, 1, 500],
        [25, 500, undefined],
      ],
    );
    assert.deepEqual(
      open.scenarios[0].flow.map((s) => s.function),
      ['sendRequest', 'afterScenario'],
    );
  });
});

describe('contracts', function () {
  this.timeout(60000);
  for (const name of CONTRACTS) {
    it(`${name}.json is the compilation of ${name}.sol`, () => {
      const committed = JSON.parse(
        fs.readFileSync(
          path.join(__dirname, '..', '..', 'src', 'chains', 'ethereum', 'contracts', `${name}.json`),
          'utf8',
        ),
      );
      const fresh = compileContract(name);
      assert.equal(committed.bytecode, fresh.bytecode, 'run: npm run build:contract');
      assert.equal(committed.deployedBytecode, fresh.deployedBytecode, 'run: npm run build:contract');
      assert.deepEqual(committed.abi, fresh.abi);
    });
  }
});
