// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// The storage contract of a STATE profile. Its runtime code is placed in the
/// genesis with storage slots 0..n-1 (slot i holds i + 1); the state builder
/// then calls it to grow the state faster than one transaction per item:
/// slots written and accounts created in loops, each call a block's share.
contract StateStore {
    /// Writes storage slots [from, from + n): slot i holds i + 1.
    function fillSlots(uint256 from, uint256 n) external {
        for (uint256 i = from; i < from + n; i++) {
            assembly { sstore(i, add(i, 1)) }
        }
    }

    /// Creates accounts [from, from + n) with 1 wei each (the call carries n wei):
    /// account i is the last 20 bytes of keccak256(abi.encode(i)).
    function fillAccounts(uint256 from, uint256 n) external payable {
        for (uint256 i = from; i < from + n; i++) {
            address a = address(uint160(uint256(keccak256(abi.encode(i)))));
            assembly { pop(call(0, a, 1, 0, 0, 0, 0)) }
        }
    }

    /// Any other calldata: the value of the slot its first 32 bytes name, so eth_call reads a slot too.
    fallback(bytes calldata) external returns (bytes memory) {
        uint256 v;
        assembly { v := sload(calldataload(0)) }
        return abi.encode(v);
    }
}
