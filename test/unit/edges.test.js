'use strict';
// measure/edges.js readEdge: what else belongs to an edge (onEdge: the generator's CPU, the window's hooks, a fleet's
// counters) is read at the edge, right after the node's CPU and before the engine's slow cross-check.

const assert = require('node:assert/strict');
const { readEdge } = require('../../src/measure/edges');

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
