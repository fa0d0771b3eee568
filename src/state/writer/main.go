// statewriter writes a chainperf STATE profile's genesis state straight into a
// fresh geth data directory (path scheme), instead of `geth init` of a huge
// genesis JSON followed by StateStore calls through a running node.
//
// The state is the base genesis (geth's `--dev dumpgenesis` with chainperf's
// changes: its gas limit, the signer wallets and the StateStore contract with
// its code) plus the items chainperf derives from an index:
//
//   - account i, for i in [0, accounts): address = last 20 bytes of
//     keccak256(uint256(i)), balance 10^18 + i (as the genesis of today);
//   - account i, for i in [fill-accounts-from, +fill-accounts): same address
//     rule, balance 1 wei (what StateStore.fillAccounts creates);
//   - storage slot i of the storage contract, for i in [0, slots): key
//     uint256(i), value i + 1 (the genesis slots and StateStore.fillSlots alike).
//
// How: every trie is built with geth's trie.StackTrie over its keys in hash
// order, so each node is hashed once and written once, straight into the key
// value store under its path-scheme key (rawdb.Write{Account,Storage}TrieNode);
// the flat state (pathdb's snapshot) is written beside it
// (rawdb.Write{Account,Storage}Snapshot), with a generator marker that says
// "done" for the root, so geth does not regenerate it at start. The disk
// layer is pathdb state id 0, with no state history (geth init would store
// the whole genesis as the history of state id 1). Memory is bounded by
// -memory-mb, not by the item count: a trie's keys are sorted in passes over
// ascending slices of the hash space (passes.go), each pass hashing every key
// and keeping those of its slice (72 bytes a kept key while sorting), plus
// pebble's cache and write buffers; nothing of the trie itself is held. Last, the genesis block
// with the computed root, its chain config, canonical hash and head markers,
// as core.Genesis.Commit writes them, with an empty ("{}") genesis alloc spec
// (geth --dev requires one; nothing chainperf runs reads it).
//
// Usage:
//
//	statewriter -datadir DIR -genesis base.json [-engine pebble] \
//	    [-accounts N] [-fill-accounts-from F -fill-accounts M] [-slots S] [-compact] \
//	    [-memory-mb MB]
//
// It prints the state root on stdout; progress goes to stderr.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethdb"
	"github.com/ethereum/go-ethereum/ethdb/leveldb"
	"github.com/ethereum/go-ethereum/ethdb/pebble"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/ethereum/go-ethereum/trie"
	"github.com/holiman/uint256"
)

// batchBytes is how much a write batch gathers before it is written.
const batchBytes = 32 << 20

// progressEvery is how often a long phase reports its progress on stderr.
const progressEvery = 5 * time.Second

// extra marks an item's idx as a position in a list of explicit entries (the base
// alloc's accounts or storage) rather than a derived item's index.
const extra = uint32(1) << 31

// item is one key of a trie: its hashed key and what it stands for.
type item struct {
	hash [32]byte
	idx  uint32
}

// options are the command line's.
type options struct {
	datadir, engine, genesis string
	accounts                 uint64
	fillFrom, fillAccounts   uint64
	slots                    uint64
	contract                 common.Address
	cacheMB                  int
	memoryMB                 uint64
	compact                  bool
	root                     string // the genesis block alone, with this state root: no state written
}

func main() {
	var o options
	var contract string
	flag.StringVar(&o.datadir, "datadir", "", "geth data directory to create (must not hold a chain)")
	flag.StringVar(&o.engine, "engine", "pebble", "database engine: pebble or leveldb")
	flag.StringVar(&o.genesis, "genesis", "", "base genesis JSON (config, header fields, small alloc)")
	flag.Uint64Var(&o.accounts, "accounts", 0, "accounts [0, n) with balance 10^18 + i")
	flag.Uint64Var(&o.fillFrom, "fill-accounts-from", 0, "first index of the 1-wei accounts")
	flag.Uint64Var(&o.fillAccounts, "fill-accounts", 0, "number of 1-wei accounts")
	flag.Uint64Var(&o.slots, "slots", 0, "storage slots [0, n) of the storage contract, slot i holding i + 1")
	flag.StringVar(&contract, "storage-contract", "0x00000000000000000000000000000000c0ffee01", "the contract whose storage holds the slots (must be in the base alloc)")
	flag.IntVar(&o.cacheMB, "cache", 256, "database cache, MB")
	flag.Uint64Var(&o.memoryMB, "memory-mb", 1024, "memory for a trie's sorted keys, MB (more keys: more passes)")
	flag.BoolVar(&o.compact, "compact", false, "compact the whole key-value store at the end (as `geth db compact`)")
	flag.StringVar(&o.root, "root", "", "write the genesis block alone with this state root (a node that snap-syncs the state from its peers)")
	flag.Parse()
	if o.datadir == "" || o.genesis == "" {
		fmt.Fprintln(os.Stderr, "usage: statewriter -datadir DIR -genesis FILE [-accounts N] [-fill-accounts-from F -fill-accounts M] [-slots S]")
		os.Exit(2)
	}
	o.contract = common.HexToAddress(contract)
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "statewriter:", err)
		os.Exit(1)
	}
}

var start = time.Now()

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func run(o options) error {
	if o.fillAccounts > 0 && o.fillFrom < o.accounts {
		return errors.New("the 1-wei accounts overlap the funded ones")
	}
	if o.fillFrom+o.fillAccounts >= uint64(extra) || o.accounts >= uint64(extra) || o.slots >= uint64(extra) {
		return errors.New("too many items: an index must stay under 2^31")
	}
	g, err := readGenesis(o.genesis)
	if err != nil {
		return err
	}
	if g.Config == nil || g.Config.TerminalTotalDifficulty == nil || g.Config.TerminalTotalDifficulty.Sign() != 0 {
		return errors.New("the genesis must be merged at block 0 (terminalTotalDifficulty 0), as geth --dev requires")
	}
	if err := g.Config.CheckConfigForkOrder(); err != nil {
		return err
	}
	if _, ok := g.Alloc[o.contract]; o.slots > 0 && !ok {
		return fmt.Errorf("the storage contract %s is not in the base alloc", o.contract)
	}
	db, err := openDB(o)
	if err != nil {
		return err
	}
	w := &writer{db: db, batch: db.NewBatch()}
	var root common.Hash
	if o.root != "" {
		// geth opens it, finds the genesis state missing and waits for a snap sync to bring it
		root = common.HexToHash(o.root)
	} else {
		root, err = writeState(w, g.Alloc, o)
	}
	if err == nil {
		err = writeGenesisBlock(w, g, root)
	}
	if err == nil {
		err = w.flush()
	}
	if err == nil && o.compact {
		logf("compacting the database")
		err = db.Compact(nil, nil)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	logf("done: state root %s, %d MB written", root.Hex(), w.written>>20)
	fmt.Println(root.Hex())
	return nil
}

// readGenesis reads the base genesis with geth's own JSON decoding.
func readGenesis(file string) (*core.Genesis, error) {
	blob, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	g := new(core.Genesis)
	if err := json.Unmarshal(blob, g); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if g.Number != 0 {
		return nil, errors.New("the genesis number must be 0")
	}
	return g, nil
}

// openDB creates the database where geth looks for it: the key-value store in
// <datadir>/geth/chaindata and its ancient stores (the chain freezer and the
// state history freezer, both left empty) in chaindata/ancient, as geth's own
// first start would, so that read-only geth commands (geth db ...) open it too.
func openDB(o options) (ethdb.Database, error) {
	dir := filepath.Join(o.datadir, "geth", "chaindata")
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var kv ethdb.KeyValueStore
	var err error
	switch o.engine {
	case "pebble":
		kv, err = pebble.New(dir, o.cacheMB, 512, "", false)
	case "leveldb":
		kv, err = leveldb.New(dir, o.cacheMB, 512, "", false)
	default:
		err = fmt.Errorf("unknown engine %q", o.engine)
	}
	if err != nil {
		return nil, err
	}
	// The chain freezer first: it goes to ancient/chain only while ancient is empty.
	ancient := filepath.Join(dir, "ancient")
	db, err := rawdb.Open(kv, rawdb.OpenOptions{Ancient: ancient})
	if err != nil {
		kv.Close()
		return nil, err
	}
	states, err := rawdb.NewStateFreezer(ancient, false, false)
	if err != nil {
		db.Close()
		return nil, err
	}
	states.Close()
	return db, nil
}

// progress reports a long phase on stderr every progressEvery: items done,
// their rate and the time left; and once more at its end. With passes, the
// time left is the items left at the writing rate (hashing excluded) plus the
// passes left at the hashing time of one.
type progress struct {
	what         string
	total, done  uint64
	start, last  time.Time
	hashing      time.Duration // spent hashing and sorting, all passes so far
	pass, passes int
}

func newProgress(what string, total uint64) *progress {
	now := time.Now()
	return &progress{what: what, total: total, start: now, last: now, passes: 1}
}

// hashed counts pass's hashing time, d.
func (p *progress) hashed(pass int, d time.Duration) {
	p.pass = pass
	p.hashing += d
}

// step counts one more item done.
func (p *progress) step() {
	p.done++
	if p.total < 1<<16 {
		return // a small trie: its one line from the caller is enough
	}
	if p.done&0xffff != 0 && p.done != p.total {
		return // the clock read once every 65536 items
	}
	now := time.Now()
	if p.done != p.total && now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	secs := now.Sub(p.start).Seconds()
	if p.done == p.total {
		logf("%s: %d of %d written in %.1f s (%.0f a second)", p.what, p.done, p.total, secs, float64(p.done)/max(secs, 1e-3))
		return
	}
	rate := float64(p.done) / max(secs-p.hashing.Seconds(), 1e-3)
	left := float64(p.total-p.done)/rate + float64(p.passes-p.pass-1)*p.hashing.Seconds()/float64(p.pass+1)
	at := ""
	if p.passes > 1 {
		at = fmt.Sprintf(", pass %d of %d", p.pass+1, p.passes)
	}
	logf("%s: %d of %d written (%.0f%%, %.0f a second%s, about %.0f s left)",
		p.what, p.done, p.total, 100*float64(p.done)/float64(p.total), rate, at, left)
}

// writer gathers writes in a batch and writes it whenever it is large.
type writer struct {
	db      ethdb.Database
	batch   ethdb.Batch
	written int64
}

func (w *writer) maybeFlush() error {
	if w.batch.ValueSize() < batchBytes {
		return nil
	}
	return w.flush()
}

func (w *writer) flush() error {
	w.written += int64(w.batch.ValueSize())
	if err := w.batch.Write(); err != nil {
		return err
	}
	w.batch.Reset()
	return nil
}

// accountAddress is chainperf's account i: the last 20 bytes of keccak256(uint256(i)).
func accountAddress(h crypto.KeccakState, i uint64) common.Address {
	var word [32]byte
	binary.BigEndian.PutUint64(word[24:], i)
	var out common.Hash
	h.Reset()
	h.Write(word[:])
	h.Read(out[:])
	return common.BytesToAddress(out[12:])
}

// storageValue is a slot's value as the trie and the flat state hold it: RLP of its trimmed bytes.
func storageValue(v common.Hash) []byte {
	blob, _ := rlp.EncodeToBytes(common.TrimLeftZeroes(v[:]))
	return blob
}

// writeStorage writes one account's storage trie and flat storage from keys in
// hash order (value(it) gives an item's encoded value); returns the trie's root.
func writeStorage(w *writer, owner common.Hash, keys keySource, o options, value func(it item) []byte, what string) (common.Hash, error) {
	var werr error
	st := trie.NewStackTrie(func(path []byte, _ common.Hash, blob []byte) {
		rawdb.WriteStorageTrieNode(w.batch, owner, path, blob)
		if err := w.maybeFlush(); err != nil && werr == nil {
			werr = err
		}
	})
	err := eachSorted(keys, o.memoryMB<<20, what, func(it item) error {
		v := value(it)
		if err := st.Update(it.hash[:], v); err != nil {
			return err
		}
		rawdb.WriteStorageSnapshot(w.batch, owner, it.hash, v)
		if err := w.maybeFlush(); err != nil {
			return err
		}
		return werr
	})
	if err != nil {
		return common.Hash{}, err
	}
	root := st.Hash() // commits the right edge and the root
	return root, werr
}

// explicitStorage writes the storage trie of a base-alloc account, plus the
// derived slots when it is the storage contract.
func explicitStorage(w *writer, addr common.Address, acct types.Account, o options) (common.Hash, error) {
	keys := make([]common.Hash, 0, len(acct.Storage))
	for k, v := range acct.Storage {
		if v != (common.Hash{}) { // a zero value is no slot
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(a, b int) bool { return bytes.Compare(keys[a][:], keys[b][:]) < 0 })
	derived := uint64(0)
	if addr == o.contract {
		derived = o.slots
	}
	if len(keys) == 0 && derived == 0 {
		return types.EmptyRootHash, nil
	}
	src := keySource{n: int(derived), derived: func(h crypto.KeccakState, k int) item {
		var key [32]byte
		binary.BigEndian.PutUint64(key[24:], uint64(k))
		return hashedItem(h, key[:], uint32(k))
	}}
	for j, k := range keys {
		src.explicit = append(src.explicit, item{hash: crypto.Keccak256Hash(k[:]), idx: extra | uint32(j)})
	}
	total := int(derived) + len(keys)
	logf("storage of %s: writing the trie and flat storage of %d slots", addr.Hex(), total)
	var word common.Hash
	root, err := writeStorage(w, crypto.Keccak256Hash(addr[:]), src, o, func(it item) []byte {
		if it.idx&extra != 0 {
			return storageValue(acct.Storage[keys[it.idx&^extra]])
		}
		binary.BigEndian.PutUint64(word[24:], uint64(it.idx)+1)
		return storageValue(word)
	}, "storage of "+addr.Hex()+": slots")
	logf("storage of %s: %d slots, root %s", addr.Hex(), total, root.Hex())
	return root, err
}

// hashedItem is the item idx whose trie key is the hash of data.
func hashedItem(h crypto.KeccakState, data []byte, idx uint32) item {
	it := item{idx: idx}
	h.Reset()
	h.Write(data)
	h.Read(it.hash[:])
	return it
}

// writeState writes the whole state and its flat state; returns the state root.
func writeState(w *writer, alloc types.GenesisAlloc, o options) (common.Hash, error) {
	// The base alloc's accounts, in a fixed order, with their storage roots and code.
	addrs := make([]common.Address, 0, len(alloc))
	for a := range alloc {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(a, b int) bool { return bytes.Compare(addrs[a][:], addrs[b][:]) < 0 })
	explicit := make([]types.StateAccount, len(addrs))
	slots := uint64(0)
	for j, a := range addrs {
		acct := alloc[a]
		slots += uint64(len(acct.Storage))
		if a == o.contract {
			slots += o.slots
		}
		root, err := explicitStorage(w, a, acct, o)
		if err != nil {
			return common.Hash{}, err
		}
		sa := types.StateAccount{Nonce: acct.Nonce, Balance: new(uint256.Int), Root: root, CodeHash: types.EmptyCodeHash[:]}
		if acct.Balance != nil {
			if sa.Balance.SetFromBig(acct.Balance) {
				return common.Hash{}, fmt.Errorf("balance of %s overflows", a.Hex())
			}
		}
		if len(acct.Code) > 0 {
			hash := crypto.Keccak256Hash(acct.Code)
			rawdb.WriteCode(w.batch, hash, acct.Code)
			sa.CodeHash = hash[:]
		}
		explicit[j] = sa
	}
	// All accounts' hashed addresses, in hash order.
	n := int(o.accounts + o.fillAccounts)
	src := keySource{n: n, derived: func(h crypto.KeccakState, k int) item {
		i := uint64(k)
		if i >= o.accounts {
			i = o.fillFrom + (i - o.accounts)
		}
		addr := accountAddress(h, i)
		return hashedItem(h, addr[:], uint32(i))
	}}
	for j, a := range addrs {
		src.explicit = append(src.explicit, item{hash: crypto.Keccak256Hash(a[:]), idx: extra | uint32(j)})
	}
	total := n + len(addrs)
	logf("accounts: writing the trie and flat accounts of %d", total)

	var werr error
	st := trie.NewStackTrie(func(path []byte, _ common.Hash, blob []byte) {
		rawdb.WriteAccountTrieNode(w.batch, path, blob)
		if err := w.maybeFlush(); err != nil && werr == nil {
			werr = err
		}
	})
	ether := new(uint256.Int).SetUint64(1e18)
	derived := types.StateAccount{Balance: new(uint256.Int), Root: types.EmptyRootHash, CodeHash: types.EmptyCodeHash[:]}
	err := eachSorted(src, o.memoryMB<<20, "accounts", func(it item) error {
		acct := &derived
		switch {
		case it.idx&extra != 0:
			acct = &explicit[it.idx&^extra]
		case uint64(it.idx) < o.accounts:
			derived.Balance.AddUint64(ether, uint64(it.idx)) // 10^18 + i
		default:
			derived.Balance.SetOne() // created by StateStore.fillAccounts with 1 wei
		}
		full, err := rlp.EncodeToBytes(acct)
		if err != nil {
			return err
		}
		if err := st.Update(it.hash[:], full); err != nil {
			return err
		}
		rawdb.WriteAccountSnapshot(w.batch, it.hash, types.SlimAccountRLP(*acct))
		if err := w.maybeFlush(); err != nil {
			return err
		}
		return werr
	})
	if err != nil {
		return common.Hash{}, err
	}
	root := st.Hash()
	if werr != nil {
		return common.Hash{}, werr
	}
	logf("accounts: %d, state root %s", total, root.Hex())

	// pathdb's metadata: the disk layer is state id 0 (no state history below
	// it), and the flat state is complete for this root, so no generation.
	rawdb.WritePersistentStateID(w.batch, 0)
	rawdb.WriteStateID(w.batch, root, 0) // the root -> state id lookup geth would add itself later
	rawdb.WriteSnapshotRoot(w.batch, root)
	marker, err := rlp.EncodeToBytes(generatorMarker{Done: true, Accounts: uint64(total), Slots: slots})
	if err != nil {
		return common.Hash{}, err
	}
	rawdb.WriteSnapshotGenerator(w.batch, marker)
	return root, nil
}

// generatorMarker has the fields, in order, of the state generator's progress
// record that pathdb reads at start (journalGenerator in triedb/pathdb): Done
// with no marker means the flat state covers the whole trie.
type generatorMarker struct {
	Wiping   bool // deprecated, kept for the encoding
	Done     bool
	Marker   []byte
	Accounts uint64
	Slots    uint64
	Storage  uint64
}

// writeGenesisBlock writes the genesis block (the base genesis's header fields
// with the given state root) and what core.Genesis.Commit writes beside it.
func writeGenesisBlock(w *writer, g *core.Genesis, root common.Hash) error {
	// geth builds the header (its fork-dependent fields: base fee,
	// withdrawals, blob gas, beacon root, requests hash) from the spec; built
	// here with an empty alloc, then its root replaced by the written state's.
	spec := *g
	spec.Alloc = nil
	empty := spec.ToBlock()
	header := empty.Header()
	header.Root = root
	block := empty.WithSeal(header)
	hash := block.Hash()

	rawdb.WriteGenesisStateSpec(w.batch, hash, []byte("{}")) // geth --dev needs one; chainperf keeps it empty
	rawdb.WriteBlock(w.batch, block)
	rawdb.WriteReceipts(w.batch, hash, 0, nil)
	rawdb.WriteCanonicalHash(w.batch, hash, 0)
	rawdb.WriteHeadBlockHash(w.batch, hash)
	rawdb.WriteHeadFastBlockHash(w.batch, hash)
	rawdb.WriteHeadHeaderHash(w.batch, hash)
	rawdb.WriteChainConfig(w.batch, hash, g.Config)
	logf("genesis block %s (gas limit %d, base fee %v)", hash.Hex(), header.GasLimit, (*big.Int)(header.BaseFee))
	return nil
}
