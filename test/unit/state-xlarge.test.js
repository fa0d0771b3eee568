'use strict';
const assert = require('node:assert/strict');
const path = require('node:path');
const P = require('../../src/state/profiles');
const { writerArgs, writerPasses, writerSeconds, WRITER_GETH, WRITER_MEMORY_MB } = require('../../src/state/writer');
const { expectedBytes, diskProblem, copyProblem } = require('../../src/state/disk');
const { ensureState } = require('../../src/state/build');
const { resolveScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

const GIB = 2 ** 30;
const statfsWith = (freeBytes) => () => ({ bsize: 4096, bavail: Math.floor(freeBytes / 4096) });

describe('STATE=xlarge', () => {
  const x = P.PROFILES.xlarge;

  it("is large's genesis and history with about 200M items of fill, about 30 GiB, statewriter only", () => {
    for (const k of ['accounts', 'slots', 'transfers', 'calls']) assert.equal(x[k], P.PROFILES.large[k], k);
    assert.equal(x.fill_accounts + x.fill_slots, 200e6);
    assert.ok(x.writer_only);
    assert.ok(!P.PROFILES.large.writer_only);
    const gib = expectedBytes(x) / GIB;
    assert.ok(gib > 26 && gib < 32, `${gib} GiB`);
    assert.match(x.doc, /GiB/);
    assert.ok(P.STATES.includes('xlarge'));
  });

  it('is written in passes within the memory budget, announced with their hashing time', () => {
    const args = writerArgs(x, { dataDir: 'D', engine: 'pebble', genesis: 'G' });
    assert.equal(args[args.indexOf('-memory-mb') + 1], String(WRITER_MEMORY_MB));
    assert.equal(args[args.indexOf('-slots') + 1], '151000000');
    assert.equal(writerPasses(11e6), 1, "large's slots in one pass, as before");
    assert.equal(writerPasses(151e6), 11);
    assert.ok(writerSeconds(x) > (202e6 / 300000) * 1.5);
  });

  it('is refused for another geth version or client before anything starts, saying why', () => {
    const V1 = { version: 1, memory: true, memsw: true, blkio: true, writable: true };
    const resolve = (text) =>
      resolveScenario(writeScenario(tmpDir(), 'st', text), { env: {}, cpuCount: 2, kernel: V1, dockerEngine: null });
    assert.deepEqual(resolve('RUNTIME=host\nSTATE=xlarge\n').errors, []);
    assert.deepEqual(resolve(`RUNTIME=host\nSTATE=xlarge\nCLIENT_VERSION=${WRITER_GETH}\n`).errors, []);
    assert.match(
      resolve('RUNTIME=host\nSTATE=xlarge\nCLIENT_VERSION=1.15.11\n').errors.join('\n'),
      /STATE=xlarge is built by statewriter alone, for geth 1\.16\.7 .*for geth 1\.15\.11 the build through the node would take days/,
    );
    assert.deepEqual(resolve('RUNTIME=host\nSTATE=large\nCLIENT_VERSION=1.15.11\n').errors, []);
    assert.match(
      resolve('CHAIN=polkadot\nCLIENT=polkadot-omni-node\nRUNTIME=host\nSTATE=xlarge\n').errors.join('\n'),
      /STATE=xlarge is built for geth 1\.16\.7 alone \(CLIENT is polkadot-omni-node\)/,
    );
  });

  it('is refused by the build too for another geth version (a CLIENT_BIN of another version)', async () => {
    const dir = tmpDir();
    const saved = process.env.CHAINPERF_CACHE;
    process.env.CHAINPERF_CACHE = path.join(dir, 'cache');
    try {
      await assert.rejects(
        ensureState({ profile: 'xlarge', bin: '/nonexistent', version: '1.15.11', engine: 'pebble', log: () => {} }),
        /STATE=xlarge is built by statewriter alone \(geth 1\.16\.7\): through geth init and the node it would take days/,
      );
    } finally {
      if (saved === undefined) delete process.env.CHAINPERF_CACHE;
      else process.env.CHAINPERF_CACHE = saved;
    }
  });
});

describe('disk check before a STATE build', () => {
  const x = P.PROFILES.xlarge;
  const size = expectedBytes(x);

  it("asks for the state, a fifth more while it builds, and a run's copy", () => {
    const dir = tmpDir();
    assert.equal(diskProblem('xlarge', x, dir, { statfs: statfsWith(size * 2.3) }), null);
    const problem = diskProblem('xlarge', x, dir, { statfs: statfsWith(size * 2) });
    assert.match(
      problem,
      /^STATE=xlarge needs about \d+\.\d GiB free on the filesystem of .*a run's copy of it .*; \d+\.\d GiB are free$/,
    );
  });

  it("without a run's copy (bench:state), the build's room alone", () => {
    const dir = tmpDir();
    assert.equal(diskProblem('xlarge', x, dir, { copy: false, statfs: statfsWith(size * 1.25) }), null);
    assert.match(diskProblem('xlarge', x, dir, { copy: false, statfs: statfsWith(size) }), /needs about/);
  });

  it('looks at the nearest existing folder when the cache folder is not there yet', () => {
    const dir = tmpDir();
    let asked;
    const statfs = (p) => {
      asked = p;
      return { bsize: 4096, bavail: 1e12 };
    };
    assert.equal(diskProblem('small', P.PROFILES.small, path.join(dir, 'no', 'such'), { statfs }), null);
    assert.equal(asked, dir);
  });

  it("a cached state's copy for a run: its size free where the run's folder is", () => {
    const dir = tmpDir();
    assert.equal(copyProblem('xlarge', 30 * GIB, dir, { statfs: statfsWith(31 * GIB) }), null);
    assert.match(
      copyProblem('xlarge', 30 * GIB, dir, { statfs: statfsWith(20 * GIB) }),
      /^STATE=xlarge: the run's copy of the state needs 30\.0 GiB free on the filesystem of .*; 20\.0 GiB are free$/,
    );
  });
});
