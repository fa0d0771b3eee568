'use strict';
// SWARM_GENERATOR_NODES: the load generators as tasks of the stack on named
// swarm nodes, each a container running the generator agent
// (src/workload/agent.js) at a port of its node. chainperf speaks to each
// over HTTP with the run's token: a pass's files (its spec, script and the
// parameter pool) go to the agent at the same paths as here, artillery runs
// there, and what the generator writes (its samples, its partial record, a
// kept generator's registrations and quiet files, artillery's output and
// log) comes back here every SYNC_MS while the pass runs, so that everything
// that reads those files reads them as if the generator ran here. A file
// chainperf removes here (a window measured again) is removed there too.
// Each generator's CPU is its container's, read by its agent from its cgroup
// when chainperf asks at a window's edge, and interpolated to the edge.
// The windows are instants of the clock: the agents' clocks are checked
// against this one before the run (CLOCK_LIMIT_MS).

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { writePassFiles } = require('./artillery');
const { beingWritten } = require('./agent');
const { sleep } = require('../util/time');

/** How often a running pass's files are brought back. */
const SYNC_MS = 100;
/** The largest difference between an agent's clock and this one that a run accepts. */
const CLOCK_LIMIT_MS = 50;
/** Where the repository is in the generator's image. */
const IMAGE_ROOT = '/chainperf';
const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The spec a generator on another machine reads: this machine's loopback address becomes its swarm address. */
function remoteSpec(spec, hereAddr) {
  if (!spec.rpc_url) return spec;
  const url = new URL(spec.rpc_url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return spec;
  url.hostname = hereAddr;
  return { ...spec, rpc_url: url.toString().replace(/\/$/, spec.rpc_url.endsWith('/') ? '/' : '') };
}

class GeneratorAgent {
  /**
   * @param {object} o
   * @param {number} o.index which generator
   * @param {string} o.hostname, o.addr the swarm node it runs on, and its address
   * @param {number} o.port the agent's port there
   * @param {string} o.token the run's token
   * @param {string} o.root the run's work folder (the agent's files are under it)
   * @param {string} o.hereAddr this machine's address in the swarm
   * @param {string} [o.imageRoot] where the repository is where the agent runs (the image's /chainperf)
   */
  constructor(o) {
    Object.assign(this, o);
    this.pulled = new Map(); // path -> size brought back
    this.pushed = new Map(); // path -> size sent
    this.clock = null;
  }

  /** One request to the agent: resolves {status, body} (a Buffer). */
  request(method, route, body = null, { timeoutMs = 10000 } = {}) {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.addr,
          port: this.port,
          path: route,
          method,
          headers: { authorization: `Bearer ${this.token}` },
          timeout: timeoutMs,
        },
        (res) => {
          const parts = [];
          res.on('data', (d) => parts.push(d));
          res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(parts) }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
      req.on('error', (err) =>
        reject(new Error(`generator ${this.index}'s agent on ${this.hostname}: ${err.message}`)),
      );
      req.end(body);
    });
  }

  async json(method, route, body = null) {
    const r = await this.request(method, route, body);
    if (r.status !== 200)
      throw new Error(`generator ${this.index}'s agent on ${this.hostname}: ${route}: ${r.status} ${r.body}`);
    return JSON.parse(String(r.body));
  }

  /** Waits until the agent answers, then measures its clock against this one (the least delayed of 5 tries). */
  async ready({ timeoutS = 60, signal } = {}) {
    const until = Date.now() + timeoutS * 1000;
    for (;;) {
      if (signal && signal.aborted) throw signal.reason;
      try {
        this.health = await this.json('GET', '/health');
        break;
      } catch (err) {
        if (Date.now() > until) throw new Error(`${err.message} (for ${timeoutS} s)`);
        await sleep(250);
      }
    }
    let best = null;
    for (let k = 0; k < 5; k++) {
      const t0 = Date.now();
      const { now_ms: there } = await this.json('GET', '/health');
      const t1 = Date.now();
      if (!best || t1 - t0 < best.rtt_ms) best = { offset_ms: there - (t0 + t1) / 2, rtt_ms: t1 - t0 };
    }
    this.clock = { offset_ms: Math.round(best.offset_ms), round_trip_ms: best.rtt_ms };
    if (Math.abs(best.offset_ms) > CLOCK_LIMIT_MS + best.rtt_ms / 2)
      throw new Error(
        `SWARM_GENERATOR_NODES: ${this.hostname}'s clock is ${this.clock.offset_ms} ms from this machine's; a window is a pair of instants every generator must agree on: synchronise the clocks (NTP) to within ${CLOCK_LIMIT_MS} ms`,
      );
    return this;
  }

  /** Sends a file here to a path there (the same, by default), when it is new or has changed size, or when forced. */
  async push(file, there = file, { force = false } = {}) {
    const size = fs.statSync(file).size;
    if (!force && this.pushed.get(there) === size) return;
    const r = await this.request('PUT', `/file?path=${encodeURIComponent(there)}`, fs.readFileSync(file), {
      timeoutMs: 120000,
    });
    if (r.status !== 200) throw new Error(`generator ${this.index}: sending ${file}: ${r.status} ${r.body}`);
    this.pushed.set(there, size);
  }

  /**
   * One exchange: what chainperf removed here is removed there; what the generator wrote there (new, or grown) comes
   * here, whole (written beside and renamed); what `sends` names goes there: files ([here, there], the pool) once they
   * exist, and the files chainperf writes into folders (a kept generator's session folder: its windows, its end).
   */
  async sync(sends = { files: [], dirs: [] }, name = '') {
    for (const [file] of this.pulled)
      if (!fs.existsSync(file)) {
        await this.request('DELETE', `/file?path=${encodeURIComponent(file)}`);
        this.pulled.delete(file);
      }
    const there = await this.json('GET', `/list?name=${encodeURIComponent(name)}`);
    for (const { path: rel, size } of there.files) {
      const file = path.join(this.root, rel);
      const here = fs.existsSync(file) ? fs.statSync(file).size : -1;
      if (this.pushed.has(file) || here === size) continue;
      const r = await this.request('GET', `/file?path=${encodeURIComponent(file)}`);
      if (r.status !== 200) continue; // removed there meanwhile
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(`${file}.part`, r.body);
      fs.renameSync(`${file}.part`, file);
      this.pulled.set(file, r.body.length);
    }
    for (const [here, to] of sends.files) if (fs.existsSync(here)) await this.push(here, to);
    for (const dir of sends.dirs)
      for (const n of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        const f = path.join(dir, n);
        if (beingWritten(n) || this.pulled.has(f) || !fs.statSync(f).isFile()) continue;
        await this.push(f);
      }
    return there.run;
  }

  /**
   * One artillery pass on the agent, as runArtillery runs one here: resolves {code, signal, rawFile, logFile,
   * specFile, scriptFile} once it has exited and its files are here; rejects with the signal's reason when aborted.
   */
  async runPass({ scenario, spec, dir, name, processor, signal }) {
    const mapped = path.join(this.imageRoot || IMAGE_ROOT, path.relative(REPO_ROOT, processor));
    // the pool is in the report folder here; there, in the work folder (the agent's files are all under it)
    const pool = spec.pool_file ? path.join(this.root, 'generator-pool', path.basename(spec.pool_file)) : null;
    const there = { ...remoteSpec(spec, this.hereAddr), ...(pool ? { pool_file: pool } : {}) };
    const files = writePassFiles({ scenario, spec: there, dir, name, processor: mapped });
    const sends = { files: pool ? [[spec.pool_file, pool]] : [], dirs: spec.session_dir ? [spec.session_dir] : [] };
    // a pass of the same name again (a window measured again) has new instants in a spec of the same size
    await this.push(files.specFile, files.specFile, { force: true });
    await this.push(files.scriptFile, files.scriptFile, { force: true });
    await this.sync(sends);
    const q = `name=${encodeURIComponent(name)}`;
    const run = { spec: files.specFile, script: files.scriptFile, output: files.rawFile, log: files.logFile };
    await this.json('POST', `/run?${q}`, JSON.stringify(run));
    const kill = () => this.request('POST', `/kill?${q}`).catch(() => {});
    if (signal) signal.addEventListener('abort', kill, { once: true });
    try {
      for (;;) {
        if (signal && signal.aborted) throw signal.reason;
        const st = await this.sync(sends, name); // what it wrote, and whether it still runs
        if (st && !st.running) {
          await this.sync(sends, name); // what it wrote as it ended
          return { code: st.code === null ? 128 : st.code, signal: st.signal, ...files };
        }
        await sleep(SYNC_MS);
      }
    } finally {
      if (signal) signal.removeEventListener('abort', kill);
    }
  }

  /**
   * CPU readings as a cgroup gives them (total_s), settled once the instants are past (settleReadings): the agent reads
   * its cgroup as the request reaches it, a moment after the instant, and the value at the instant is interpolated
   * between that reading and the one before it (the agent's once-a-second reading, at most).
   */
  group() {
    const agent = this;
    const valueAt = async (ms) => (await agent.json('GET', `/cpu?at=${ms}`))[0];
    return {
      name: `generator ${this.index} on ${this.hostname}`,
      remote: true,
      /** @param {number} [atMs] the instant (several agents' readings summed share one) */
      cpu(atMs = Date.now()) {
        const reading = { at_ms: atMs, total_s: null };
        const read = agent.json('POST', '/cpu').catch(() => null); // now, at the edge
        reading.settle = async () => {
          await read;
          const at = reading.at_ms + (agent.clock ? agent.clock.offset_ms : 0); // the instant by the agent's clock
          let v = await valueAt(at);
          if (v === null && (await agent.json('POST', '/cpu')).read) v = await valueAt(at); // the read came early
          reading.total_s = v;
        };
        return reading;
      },
    };
  }
}

/** The CPU readings of a window taken from agents, asked for now that their instants are past; null when unanswered. */
async function settleReadings(readings) {
  const out = [];
  for (const r of readings) {
    if (!r || !r.settle) {
      out.push(r);
      continue;
    }
    try {
      await r.settle();
      out.push(r.total_s === null ? null : r);
    } catch {
      out.push(null);
    }
  }
  return out;
}

/** The generators' total CPU: the sum of every agent's. */
function agentsGroup(agents) {
  const groups = agents.map((a) => a.group());
  return {
    name: `the generators on ${[...new Set(agents.map((a) => a.hostname))].join(', ')}`,
    remote: true,
    cpu() {
      const reading = { at_ms: Date.now(), total_s: null };
      const parts = groups.map((g) => g.cpu(reading.at_ms)); // one instant for all: the sum is the total at it
      reading.settle = async () => {
        let total = 0;
        for (const p of parts) {
          await p.settle();
          if (p.total_s === null) return;
          total += p.total_s;
        }
        reading.total_s = total;
      };
      return reading;
    },
  };
}

module.exports = { GeneratorAgent, settleReadings, agentsGroup, remoteSpec, CLOCK_LIMIT_MS, IMAGE_ROOT };
