'use strict';
// Reads a scenario .env file into settings with their line numbers. It only
// splits lines; what a key means and which values it takes is resolve.js's job.

const fs = require('node:fs');

const SETTING = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

/** Removes surrounding quotes, or an unquoted value's trailing " # comment". */
function unquote(raw) {
  const v = raw.trim();
  const q = v[0];
  if ((q === '"' || q === "'") && v.length >= 2) {
    const end = v.indexOf(q, 1);
    if (
      end > 0 &&
      v
        .slice(end + 1)
        .trim()
        .replace(/^#.*$/, '') === ''
    )
      return { value: v.slice(1, end) };
    return { error: `unbalanced ${q} quote` };
  }
  return { value: v.replace(/\s+#.*$/, '').trim() };
}

/**
 * @param {string} text file contents
 * @param {string} file path used in messages
 * @returns {{settings: {key:string,value:string,line:number}[], errors: string[]}}
 */
function parseEnvText(text, file) {
  const settings = [];
  const errors = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const m = SETTING.exec(trimmed);
    if (!m) {
      errors.push(`${file}:${line}: not a setting (expected KEY=value): ${trimmed.slice(0, 80)}`);
      return;
    }
    const { value, error } = unquote(m[2]);
    if (error) errors.push(`${file}:${line}: ${m[1]}: ${error}`);
    else settings.push({ key: m[1], value, line });
  });
  return { settings, errors };
}

function parseEnvFile(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'is a directory' : err.message;
    return { settings: [], errors: [`${file}: cannot read scenario file: ${why}`] };
  }
  return parseEnvText(text, file);
}

module.exports = { parseEnvText, parseEnvFile };
