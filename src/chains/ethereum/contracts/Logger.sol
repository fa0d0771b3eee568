// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// The contract chainperf deploys on a dev chain so that eth_call, eth_estimateGas
/// and eth_getLogs have real state and real logs to work on.
contract Logger {
    event Ping(address indexed from, uint256 indexed n, bytes32 data);

    mapping(address => uint256) public counts;
    uint256 public total;

    /// Writes state and emits a log; history for eth_getLogs and receipts.
    function ping(bytes32 data) external {
        counts[msg.sender] += 1;
        total += 1;
        emit Ping(msg.sender, total, data);
    }

    /// ERC-20 style balances for the token transfer workload (WORKLOAD=eth-token-transfers).
    mapping(address => uint256) public balanceOf;
    uint256 public totalSupply;
    event Transfer(address indexed from, address indexed to, uint256 value);

    /// An ERC-20 transfer: two balances written and a Transfer log. A sender
    /// short of tokens is minted some first, so any funded account can send.
    function transfer(address to, uint256 value) external returns (bool) {
        uint256 b = balanceOf[msg.sender];
        if (b < value) {
            b += 1e24;
            totalSupply += 1e24;
        }
        balanceOf[msg.sender] = b - value;
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }

    /// Reads state in a loop; gives eth_call a little real work.
    function sumCounts(address[] calldata who) external view returns (uint256 s) {
        for (uint256 i = 0; i < who.length; i++) s += counts[who[i]];
    }
}
