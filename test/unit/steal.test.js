'use strict';
const assert = require('node:assert/strict');
const { parseStat, readSteal, stealBetween, cpusOf } = require('../../src/measure/steal');

// /proc/stat as a 2-vCPU KVM guest prints it: user nice system idle iowait irq softirq steal guest guest_nice
const stat = (steal0, steal1) =>
  [
    `cpu  2000 0 400 6000 0 0 100 ${steal0 + steal1} 0 0`,
    `cpu0 1000 0 200 3000 0 0 50 ${steal0} 0 0`,
    `cpu1 1000 0 200 3000 0 0 50 ${steal1} 0 0`,
    'intr 1 2 3',
    'ctxt 12345',
  ].join('\n');

describe('steal time from /proc/stat', () => {
  it('reads the steal column of the cpus asked, per cpu line, not the aggregate', () => {
    assert.deepEqual(parseStat(stat(30, 70), '1'), { steal_s: 0.7, total_s: 43.2 });
    assert.deepEqual(parseStat(stat(30, 70), null), { steal_s: 1, total_s: 86 });
    assert.deepEqual(parseStat(stat(30, 70), '0-1'), parseStat(stat(30, 70), null));
  });

  it('has no answer for a cpu the machine does not have', () => {
    assert.equal(parseStat(stat(0, 0), '0,3'), null);
  });

  it("gives the window's steal as a share of the cpus' time", () => {
    const a = parseStat(stat(0, 0), '0');
    const b = { steal_s: a.steal_s + 0.5, total_s: a.total_s + 10 };
    assert.deepEqual(stealBetween(a, b, '0'), { cpus: '0', steal_s: 0.5, share: 0.05 });
    assert.equal(stealBetween(null, b, '0'), null);
    assert.equal(stealBetween(a, a, '0'), null, 'no time passed: no share');
  });

  it('expands cpu lists', () => {
    assert.deepEqual(cpusOf('0,2-4'), [0, 2, 3, 4]);
  });

  it("reads this machine's /proc/stat", () => {
    const r = readSteal(null);
    assert.ok(r.total_s > 0 && r.steal_s >= 0 && r.steal_s <= r.total_s);
  });
});
