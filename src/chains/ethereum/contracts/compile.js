'use strict';
// Compiles the contracts with the pinned solc (a dev dependency) into their
// .json (abi, creation bytecode and runtime bytecode). Run by
// `npm run build:contract`; a unit test checks each .json is up to date.
const fs = require('node:fs');
const path = require('node:path');

const CONTRACTS = ['Logger', 'StateStore', 'SlotWriter'];

/** One contract's compilation: {compiler, abi, bytecode, deployedBytecode}. */
function compileContract(name) {
  const solc = require('solc');
  const file = `${name}.sol`;
  const source = fs.readFileSync(path.join(__dirname, file), 'utf8');
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'paris',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors || []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = out.contracts[file][name];
  return {
    compiler: `solc ${solc.version()}`,
    abi: c.abi,
    bytecode: `0x${c.evm.bytecode.object}`,
    deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
  };
}

if (require.main === module) {
  for (const name of CONTRACTS)
    fs.writeFileSync(path.join(__dirname, `${name}.json`), `${JSON.stringify(compileContract(name), null, 2)}\n`);
}

module.exports = { compileContract, CONTRACTS };
