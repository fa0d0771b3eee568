'use strict';
// ./run.sh mix: a workload file from a capture.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { deriveMix, readCapture, mixYaml } = require('../../src/record/mix');
const { tmpDir, ROOT } = require('../helpers');

/**
 * A copy of chainperf's sources with an empty workloads/ of its own: the tests below write workloads there, not into
 * the repository's, whose contents other tests running beside them hash (the generator image's tag).
 */
function sourcesCopy() {
  const root = tmpDir('chainperf-mix-');
  fs.cpSync(path.join(ROOT, 'src'), path.join(root, 'src'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(root, 'package.json'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  fs.mkdirSync(path.join(root, 'workloads'));
  const { loadMix } = require(path.join(root, 'src', 'workload', 'artillery')); // the copy's, reading its workloads/
  return { root, cli: path.join(root, 'src', 'cli.js'), loadMix };
}

const hex = (n) => `0x${n.toString(16)}`;

/** 100 requests over 10 s: 50 eth_call, 30 eth_getBlockByNumber, 15 eth_getLogs, 4 net_version, 1 eth_getBalance. */
function capture() {
  const lines = [];
  const t0 = 1_763_880_000_000;
  const add = (method, params, extra = {}) =>
    lines.push({
      t: t0 + lines.length * 101,
      transport: 'http',
      method,
      params,
      batch: null,
      latency_ms: 1,
      bytes: 10,
      head: 1000,
      error: null,
      ...extra,
    });
  for (let i = 0; i < 50; i++) add('eth_call', [{ to: '0x1', data: '0x' }, 'latest']);
  for (let i = 0; i < 30; i++) add('eth_getBlockByNumber', [hex(1000 - i), false]); // depths 0..29
  for (let i = 0; i < 15; i++) add('eth_getLogs', [{ fromBlock: hex(900), toBlock: hex(900 + i) }]); // ranges 1..15
  for (let i = 0; i < 4; i++) add('net_version', [], { batch: { seq: 7, size: 4, index: i } });
  add('eth_getBalance', ['0x2', '0x3e0'], { error: { code: -32000, message: 'header not found' } });
  return lines;
}

describe('mix from a capture', () => {
  it("weights are each known method's share in percent of the methods chainperf parameterizes; unknown methods are named and left out", () => {
    const d = deriveMix(capture());
    assert.deepEqual(d.mix, { eth_call: 52.08, eth_getBlockByNumber: 31.25, eth_getLogs: 15.63, eth_getBalance: 1.04 });
    assert.deepEqual(d.not_in_mix, ['net_version']);
    assert.equal(d.traffic.methods.net_version, 4);
    assert.equal(d.traffic.requests, 100);
    assert.equal(d.traffic.errors, 1);
  });

  it('parameter shapes: eth_getLogs block ranges, depth behind the head, tags, batch sizes', () => {
    const t = deriveMix(capture()).traffic;
    assert.deepEqual(t.get_logs_block_range, { samples: 15, mean: 8, p50: 8, p90: 14, max: 15 });
    // 30 eth_getBlockByNumber at depths 0..29, 15 eth_getLogs at depth 100, eth_getBalance at depth 8
    assert.equal(t.block_depth.samples, 46);
    assert.equal(t.block_depth.max, 100);
    assert.deepEqual(t.block_tags, { latest: 50 });
    assert.deepEqual(t.batches, {
      count: 1,
      requests_in_batches: 4,
      size: { samples: 1, mean: 4, p50: 4, p90: 4, max: 4 },
    });
    assert.ok(Math.abs(t.seconds - 9.999) < 1e-9);
  });

  it('the written file is a workload loadMix reads; the traffic table is ignored by it', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'cap.jsonl');
    fs.writeFileSync(
      file,
      `${capture()
        .map((l) => JSON.stringify(l))
        .join('\n')}\n`,
    );
    const text = mixYaml(deriveMix(readCapture(file)), { source: 'cap.jsonl' });
    const copy = sourcesCopy();
    fs.writeFileSync(path.join(copy.root, 'workloads', 'from-capture.yml'), text);
    assert.deepEqual(copy.loadMix('from-capture'), deriveMix(capture()).mix);
  });

  it('./run.sh mix writes workloads/<name>.yml and prints its path last; a capture without a known method is exit 2', function () {
    this.timeout(20000); // two ./run.sh processes: about 2 s on a quiet machine
    const dir = tmpDir();
    const file = path.join(dir, 'cap.jsonl');
    fs.writeFileSync(
      file,
      capture()
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    const { root, cli, loadMix } = sourcesCopy();
    const name = 'from-capture';
    const out = path.join(root, 'workloads', `${name}.yml`);
    const r = spawnSync(process.execPath, [cli, 'mix', file, '--name', name], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), out);
    assert.match(r.stderr, /left out: net_version/);
    assert.equal(loadMix(name).eth_call, 52.08);
    const again = spawnSync(process.execPath, [cli, 'mix', file, '--name', name], { encoding: 'utf8' });
    assert.equal(again.status, 2, 'an existing workload is not overwritten');
    assert.match(again.stderr, /exists/);
    assert.equal(spawnSync(process.execPath, [cli, 'mix', file, '--name', name, '--replace', 'yes']).status, 0);
    fs.writeFileSync(file, JSON.stringify({ t: 1, method: 'net_version', params: [] }));
    const bad = spawnSync(process.execPath, [cli, 'mix', file], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /none of the methods seen \(net_version\)/);
    fs.writeFileSync(file, 'not json\n');
    assert.match(spawnSync(process.execPath, [cli, 'mix', file], { encoding: 'utf8' }).stderr, /line 1 is not JSON/);
  });
});
