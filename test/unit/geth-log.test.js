'use strict';
// geth's own import time for each block, read from its log lines (its
// chain/inserts timer empties at every read of its metrics page).

const assert = require('node:assert/strict');
const { goDurationMs, importsInLog } = require('../../src/clients/geth-log');

describe("geth's log: its own time for each block it imported", () => {
  it('reads Go durations in every unit geth prints, and refuses what is not one', () => {
    assert.equal(goDurationMs('13.717ms'), 13.717);
    assert.equal(goDurationMs('512.5µs'), 0.5125);
    assert.equal(goDurationMs('1.5s'), 1500);
    assert.equal(goDurationMs('1m2.5s'), 62500);
    assert.equal(goDurationMs('250ns'), 0.00025);
    assert.equal(goDurationMs(''), null);
    assert.equal(goDurationMs('12 ms'), null);
    assert.equal(goDurationMs('fast'), null);
  });

  it('takes each one-block "Imported new potential chain segment" line: its number and elapsed', () => {
    const log = [
      'INFO [12-04|20:29:37.226] Imported new potential chain segment     number=1 hash=14e3c2..a586ee blocks=1 txs=64 mgas=1.344 elapsed=13.717ms mgasps=97.979 triediffs=21.36KiB triedirty=0.00B',
      'INFO [12-04|20:29:38.001] Chain head was updated                   number=1 hash=14e3c2..a586ee root=8d1c4e..0f1a2b elapsed="512.3µs"',
      'INFO [12-04|20:29:39.192] Imported new potential chain segment     number=2 hash=50412d..2e2d9b blocks=1 txs=2  mgas=0.454 elapsed=1.152ms     mgasps=394.053 triediffs=25.47KiB triedirty=0.00B',
      // a segment of several blocks (a sync) has no time of one block
      'INFO [12-04|20:29:40.000] Imported new potential chain segment     number=40 hash=aa..bb blocks=38 txs=90 mgas=4.1 elapsed=1.2s mgasps=3.4',
    ].join('\n');
    assert.deepEqual(importsInLog(log), [
      [1, 13.717],
      [2, 1.152],
    ]);
  });
});
