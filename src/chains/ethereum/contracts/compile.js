'use strict';
// Compiles Logger.sol with the pinned solc (a dev dependency) into Logger.json.
// Run by `npm run build:contract`; a unit test checks Logger.json is up to date.
const fs = require('node:fs');
const path = require('node:path');

function compileLogger() {
  const solc = require('solc');
  const source = fs.readFileSync(path.join(__dirname, 'Logger.sol'), 'utf8');
  const input = {
    language: 'Solidity',
    sources: { 'Logger.sol': { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'paris', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors || []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = out.contracts['Logger.sol'].Logger;
  return { compiler: `solc ${solc.version()}`, abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

if (require.main === module) {
  fs.writeFileSync(path.join(__dirname, 'Logger.json'), `${JSON.stringify(compileLogger(), null, 2)}\n`);
}

module.exports = { compileLogger };
