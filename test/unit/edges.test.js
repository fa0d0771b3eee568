'use strict';
// measure/edges.js readEdge: what else belongs to an edge (onEdge: the generator's CPU, the window's hooks, a fleet's
// counters) is read at the edge, right after the node's CPU and before the engine's slow cross-check. measureIdle: a
// baseline over a node still settling after its start is measured again.

const assert = require('node:assert/strict');
const { readEdge, measureIdle, measureIdleTogether } = require('../../src/measure/edges');

describe('readEdge', () => {
  it("runs onEdge after the node's CPU is read and before the cross-check's answer, not after it", async () => {
    const order = [];
    const stack = {
      runtime: 'compose',
      node: {},
      cpu: { read: async () => (order.push('cpu'), { total_s: 1 }) },
      cpuCheck: {
        read: async () => {
          order.push('check asked');
          await new Promise((r) => setTimeout(r, 300)); // the Docker engine's stats, slow on a loaded machine
          order.push('check answered');
          return { total_s: 1 };
        },
      },
    };
    const planned = Date.now() + 50;
    let onEdgeAt = null;
    const edge = await readEdge(stack, planned, undefined, () => {
      onEdgeAt = Date.now();
      order.push('onEdge');
    });
    assert.deepEqual(order, ['cpu', 'onEdge', 'check asked', 'check answered']);
    assert.ok(onEdgeAt >= planned && onEdgeAt - planned < 250, `onEdge ${onEdgeAt - planned} ms after the edge`);
    assert.equal(edge.cpu.total_s, 1);
  });

  it('with a source read at its refreshes (attach), runs onEdge once that reading has landed: the hooks take it', async () => {
    const order = [];
    const stack = {
      cpu: {
        readEdge: async () => {
          await new Promise((r) => setTimeout(r, 100)); // the refresh at the edge
          order.push('reading');
          return { total_s: 2 };
        },
      },
    };
    const edge = await readEdge(stack, Date.now(), undefined, () => order.push('onEdge'));
    assert.deepEqual(order, ['reading', 'onEdge']);
    assert.equal(edge.cpu.total_s, 2);
  });
});

/** A host-runtime stack whose node uses `busy` cores until busyMs from now, then `idle` cores. */
function settlingStack(busy, busyMs, idle = 0.01) {
  const t0 = Date.now();
  const total = () => {
    const t = (Date.now() - t0) / 1000;
    const b = Math.min(t, busyMs / 1000);
    return busy * b + idle * (t - b);
  };
  return { runtime: 'compose', node: {}, cpu: { read: async () => ({ total_s: total() }) } };
}

const rateOf = (idle) => idle.cpu_s / idle.seconds;

describe('measureIdle', () => {
  it('keeps the first baseline of a node at rest, with the rate over each half', async () => {
    const idle = await measureIdle(settlingStack(0, 0, 0.05), 0.4);
    assert.equal(idle.settling, undefined);
    assert.ok(Math.abs(rateOf(idle) - 0.05) < 0.01, `${rateOf(idle)} cores`);
    assert.equal(idle.halves.length, 2);
  });

  it('measures again while the node is still settling after its start, and keeps the baseline after it', async () => {
    // a node busy at one core for its first second (geth's KZG initialisation, in small): the first 400 ms baseline
    // (from 200 ms on) is all busy, and a later one holds the end of it
    const idle = await measureIdle(settlingStack(1, 1000), 0.4);
    assert.ok(idle.settling.length >= 1, JSON.stringify(idle));
    assert.ok(idle.settling[0].cpu_s_per_s > 0.5, JSON.stringify(idle.settling));
    assert.equal(idle.settled, true);
    assert.ok(rateOf(idle) < 0.02, `the baseline kept: ${rateOf(idle)} cores`);
  });

  it('a node that does not settle: at most 4 baselines more, settled false', async () => {
    // a rate falling from 50 cores by e every 0.5 s: over 0.1 s baselines 0.3 s apart, each far above 0.2 cores and
    // below 0.75 times the one before, however late a read (it stays above 0.2 cores for 2.7 s)
    const t0 = Date.now();
    let reads = 0;
    const total = () => 50 * 0.5 * (1 - Math.exp(-(Date.now() - t0) / 1000 / 0.5));
    const stack = { runtime: 'compose', node: {}, cpu: { read: async () => (reads++, { total_s: total() }) } };
    const idle = await measureIdle(stack, 0.1);
    assert.equal(reads, 15, 'five baselines of three reads');
    assert.equal(idle.settling.length, 4);
    assert.equal(idle.settled, false);
  });

  it('a source read at edges only (no halves): measured again when busy, kept once it no longer falls', async () => {
    // busy at 0.5 cores for good (a node of a real network importing blocks): one baseline more, the second kept
    const steady = settlingStack(0.5, 60000);
    const readEdge = async (edgeMs) => {
      await new Promise((r) => setTimeout(r, Math.max(0, edgeMs - Date.now()))); // the refresh at the edge
      return steady.cpu.read();
    };
    const stack = { ...steady, cpu: { ...steady.cpu, readEdge } };
    const idle = await measureIdle(stack, 0.3);
    assert.equal(idle.halves, undefined);
    assert.equal(idle.settling.length, 1);
    assert.equal(idle.settled, true);
  });

  it("two nodes at once (an interleaved A/B pair's): both measured again while either settles, ending together", async () => {
    // B busy for its first second, A at rest: a baseline for A that ended seconds before B's would lie seconds before
    // the window that follows both
    const [a, b] = await measureIdleTogether(
      [
        { stack: settlingStack(0, 0, 0.05), seconds: 0.4 },
        { stack: settlingStack(1, 1000), seconds: 0.4 },
      ],
      undefined,
    );
    assert.ok(b.settling.length >= 1, JSON.stringify(b));
    assert.equal(b.settled, true);
    assert.equal(a.settling, undefined, 'A was not settling: no entry of its own');
    assert.ok(Math.abs(a.end_ms - b.end_ms) < 100, `A ended at ${a.end_ms}, B at ${b.end_ms}`);
    assert.ok(Math.abs(rateOf(a) - 0.05) < 0.01, `${rateOf(a)} cores`);
  });
});
