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

    /// Reads state in a loop; gives eth_call a little real work.
    function sumCounts(address[] calldata who) external view returns (uint256 s) {
        for (uint256 i = 0; i < who.length; i++) s += counts[who[i]];
    }
}
