'use strict';
// The test runner's extra lane (scripts/lib/idle-lane.js): a file more only while the cores idle, at most `extra`
// at once, never while canStart says no; stop() waits for the files it started.

const assert = require('node:assert/strict');
const { idleLane, machineCpu } = require('../../scripts/lib/idle-lane');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A machine whose cores are busy `share` of the time: each read adds 100 jiffies, share of them busy. */
function machine(share) {
  const m = { share, busy: 0, total: 0 };
  m.read = () => {
    m.busy += 100 * m.share;
    m.total += 100;
    return { busy: m.busy, total: m.total };
  };
  return m;
}

describe('idleLane (the test runner starts a file more while the cores idle)', () => {
  it('starts nothing while the cores are busy, then a file once they idle', async () => {
    const m = machine(0.9);
    const started = [];
    const lane = idleLane({
      extra: 1,
      canStart: () => true,
      start: (busy) => {
        started.push(busy);
        return sleep(1000);
      },
      everyMs: 5,
      lookS: 0.02,
      read: m.read,
    });
    await sleep(100);
    assert.deepEqual(started, [], 'busy 90% of the time: no file more');
    m.share = 0.3;
    await sleep(100);
    assert.equal(started.length, 1);
    assert.ok(started[0] < 0.7, `started at ${started[0]} busy`);
    await lane.stop();
  });

  it('runs at most `extra` at once, none while canStart says no, and stop() waits for those it started', async () => {
    const m = machine(0.1);
    let allowed = false;
    let running = 0;
    let most = 0;
    let finished = 0;
    const lane = idleLane({
      extra: 2,
      canStart: () => allowed,
      start: () => {
        running++;
        most = Math.max(most, running);
        return sleep(150).then(() => {
          running--;
          finished++;
        });
      },
      everyMs: 5,
      lookS: 0.01,
      read: m.read,
    });
    await sleep(60);
    assert.equal(most, 0, 'canStart false: nothing');
    allowed = true;
    await sleep(100);
    assert.equal(most, 2, 'two at once, no more');
    allowed = false;
    await lane.stop();
    assert.equal(running, 0, 'stop() waited for the files running');
    assert.equal(finished, 2);
  });

  it('goes on watching when start() has no file to give', async () => {
    const m = machine(0);
    let asked = 0;
    const lane = idleLane({
      extra: 1,
      canStart: () => true,
      start: () => {
        asked++;
        return null;
      },
      everyMs: 5,
      lookS: 0.01,
      read: m.read,
    });
    await sleep(80);
    await lane.stop();
    assert.ok(asked >= 2, `asked ${asked} times`);
  });

  it("reads the machine's CPU from /proc/stat where there is one", () => {
    const a = machineCpu();
    if (process.platform !== 'linux') return assert.equal(a, null);
    assert.ok(a.total > 0 && a.busy >= 0 && a.busy <= a.total, JSON.stringify(a));
  });
});
