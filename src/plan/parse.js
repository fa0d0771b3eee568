'use strict';
// Plan files: a base scenario, the keys to sweep with their values, the
// repetitions per point, and scenario keys fixed for every point. Every point
// is resolved (and so validated) before anything starts.
//
//   BASE=../scenarios/geth-dev.env   # relative to the plan file
//   SWEEP=DB_CACHE_MB                # one key, or several separated by commas (all combinations)
//   DB_CACHE_MB=32,128,512,1024      # a list, or from..to*factor, or from..to+step
//   REPETITIONS=3
//   DURATION_S=30                    # any other scenario key: fixed for every point

const path = require('node:path');
const { parseEnvFile } = require('../scenario/parse');
const { resolveScenario } = require('../scenario/resolve');
const { KEYS } = require('../scenario/keys');
const { closest } = require('../util/strings');
const { folderNameProblem } = require('../scenario/paths');
const { addSecretValue } = require('../util/scrub');

const PLAN_KEYS = ['BASE', 'SWEEP', 'REPETITIONS', 'PLAN_NAME'];
const MAX_POINTS = 1000;

/** Whether a .env file is a plan (it sets BASE or SWEEP) rather than a scenario. */
function isPlanFile(file) {
  return parseEnvFile(file).settings.some((s) => s.key === 'BASE' || s.key === 'SWEEP');
}

/** Expands a values spec into strings: "a,b,c", "32..1024*2" or "50..400+50". */
function expandValues(spec) {
  const range = /^(-?\d+(?:\.\d+)?)\.\.(-?\d+(?:\.\d+)?)([*+])(\d+(?:\.\d+)?)$/.exec(spec.replace(/\s+/g, ''));
  if (!range) {
    const list = spec.split(',').map((v) => v.trim());
    if (list.some((v) => v === '')) return { error: `empty value in "${spec}"` };
    return { values: list };
  }
  const [from, to, op, step] = [Number(range[1]), Number(range[2]), range[3], Number(range[4])];
  if (to < from) return { error: `range ${spec} ends below its start` };
  if (op === '*' && !(step > 1 && from > 0))
    return { error: `range ${spec}: a factor must be above 1 and the start above 0` };
  if (op === '+' && !(step > 0)) return { error: `range ${spec}: the step must be above 0` };
  const values = [];
  for (let v = from; v <= to * (1 + 1e-12) && values.length <= MAX_POINTS; v = op === '*' ? v * step : v + step) {
    values.push(String(Number(v.toPrecision(12))));
  }
  return { values };
}

/**
 * The environment a point's run resolves with: plan's fixed keys, then the user's environment, then the point's values.
 */
function pointEnv(env, fixed, point) {
  return { ...fixed, ...env, ...point.values, NAME: point.name };
}

function cartesian(lists) {
  return lists.reduce((acc, list) => acc.flatMap((prefix) => list.map((v) => [...prefix, v])), [[]]);
}

/** The plan's settings by key; unknown keys are errors. */
function planSettings(file, settings, errors) {
  const byKey = {};
  for (const s of settings) {
    const where = `${file}:${s.line}`;
    if (!PLAN_KEYS.includes(s.key) && !KEYS[s.key]) {
      const near = closest(s.key, [...PLAN_KEYS, ...Object.keys(KEYS)]);
      errors.push(`${where}: unknown key ${s.key}${near ? ` (did you mean ${near}?)` : ''}`);
      continue;
    }
    byKey[s.key] = { ...s, where };
    if (KEYS[s.key]) addSecretValue(KEYS[s.key], s.value); // known to the output boundary before any message
  }
  return byKey;
}

function planRepetitions(byKey, errors) {
  if (!byKey.REPETITIONS) return 1;
  const repetitions = Number(byKey.REPETITIONS.value);
  if (!/^\d+$/.test(byKey.REPETITIONS.value) || repetitions < 1 || repetitions > 100) {
    errors.push(
      `${byKey.REPETITIONS.where}: REPETITIONS: expected an integer from 1 to 100, got "${byKey.REPETITIONS.value}"`,
    );
  }
  return repetitions;
}

/** The values of each swept key, as [key, value, index] triples. */
function sweepLists(sweep, byKey, errors) {
  const lists = [];
  for (const key of sweep) {
    if (!KEYS[key]) {
      const near = closest(key, Object.keys(KEYS));
      errors.push(`${byKey.SWEEP.where}: SWEEP: ${key} is not a scenario key${near ? ` (did you mean ${near}?)` : ''}`);
    } else if (!byKey[key]) {
      errors.push(`${byKey.SWEEP.where}: SWEEP names ${key} but the plan gives no values for it (e.g. ${key}=a,b,c)`);
    } else {
      const { values, error } = expandValues(byKey[key].value);
      if (error) errors.push(`${byKey[key].where}: ${key}: ${error}`);
      else {
        for (const v of values) addSecretValue(KEYS[key], v);
        lists.push(values.map((v, i) => [key, v, i]));
      }
    }
  }
  return lists;
}

function planPoints(combos, name) {
  return combos.map((pairs) => {
    const values = Object.fromEntries(pairs.map(([k, v]) => [k, v]));
    // A secret key's value (a URL with a key in it) never names a folder: its position in the list does.
    const label = ([k, v, i]) => `${k}-${KEYS[k].secret ? i + 1 : v}`;
    return { values, name: `${name}-${pairs.map(label).join('-')}`.replace(/[^A-Za-z0-9_.-]/g, '_') };
  });
}

/**
 * @returns {{plan: object|null, errors: string[]}}
 *   plan: {file, name, base, sweep: string[], repetitions, fixed: {key: value}, points: [{values: {key: value}, name}]}
 */
function parsePlan(file, { env = process.env } = {}) {
  const { settings, errors } = parseEnvFile(file);
  const byKey = planSettings(file, settings, errors);
  if (!byKey.BASE) errors.push(`${file}: BASE is missing: the scenario file the plan starts from`);
  if (!byKey.SWEEP) errors.push(`${file}: SWEEP is missing: the key(s) the plan varies`);
  const repetitions = planRepetitions(byKey, errors);
  const sweep = byKey.SWEEP
    ? byKey.SWEEP.value
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean)
    : [];
  const lists = sweepLists(sweep, byKey, errors);
  if (errors.length) return { plan: null, errors };

  const fixed = {};
  for (const [key, s] of Object.entries(byKey)) if (KEYS[key] && !sweep.includes(key)) fixed[key] = s.value;
  const base = path.resolve(path.dirname(file), byKey.BASE.value);
  const name = byKey.PLAN_NAME
    ? byKey.PLAN_NAME.value
    : path
        .basename(file)
        .replace(/\.env$/, '')
        .replace(/[^A-Za-z0-9_.-]/g, '_')
        .replace(/^\./, '_');
  const nameProblem = folderNameProblem(name); // PLAN_NAME names a folder under REPORTS_DIR/plans: never ".." or a path
  if (nameProblem) return { plan: null, errors: [`${byKey.PLAN_NAME.where}: PLAN_NAME: ${nameProblem}`] };
  const combos = cartesian(lists);
  if (combos.length > MAX_POINTS)
    return { plan: null, errors: [`${file}: ${combos.length} points; at most ${MAX_POINTS}`] };
  const points = planPoints(combos, name);
  // Resolve every point now: a bad value is found before the first run, not after an hour.
  for (const p of points) {
    const r = resolveScenario(base, { env: pointEnv(env, fixed, p) });
    for (const e of r.errors)
      errors.push(
        `point ${Object.entries(p.values)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}: ${e}`,
      );
  }
  if (errors.length) return { plan: null, errors };
  return { plan: { file, name, base, sweep, repetitions, fixed, points }, errors: [] };
}

module.exports = { parsePlan, expandValues, isPlanFile, pointEnv, PLAN_KEYS };
