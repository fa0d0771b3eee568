// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// The contract of chain traffic's storage_write transactions (CHAIN_LOAD). A
/// STATE profile's storage contract (StateStore) cannot take new values into
/// its slots (its only writers store slot i's own value, i + 1), so each call
/// reads the profile's slots there and writes its own slots under the same
/// keys: the reads land in the profile's storage trie, the writes in this
/// contract's, indexed like the profile's slots.
contract SlotWriter {
    event Wrote(address indexed from, uint256 keys);

    /// For each key: when store is not zero, reads slot `key` of store by a
    /// STATICCALL of its fallback (which answers the slot its calldata names);
    /// then writes this contract's slot `key` with a value made of what was read
    /// and salt (a salt new to each call makes a new value).
    function write(address store, uint256[] calldata keys, uint256 salt) external {
        for (uint256 i = 0; i < keys.length; i++) {
            uint256 k = keys[i];
            uint256 v = 0;
            if (store != address(0)) {
                assembly ("memory-safe") {
                    mstore(0, k)
                    if staticcall(gas(), store, 0, 32, 0, 32) {
                        v := mload(0)
                    }
                }
            }
            assembly ("memory-safe") {
                sstore(k, or(xor(v, salt), 1))
            }
        }
        emit Wrote(msg.sender, keys.length);
    }
}
