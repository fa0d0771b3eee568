package main

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/ethereum/go-ethereum/crypto"
)

// keyBytes is what one kept key costs while its pass sorts it: the item
// gathered, and its copy in sortItems.
const keyBytes = 2 * uint64(unsafe.Sizeof(item{}))

// keySource is a trie's keys: n derived ones (derived(h, k) hashes key k) and
// a few explicit ones, already hashed.
type keySource struct {
	n        int
	derived  func(h crypto.KeccakState, k int) item
	explicit []item
}

// passCount is how many passes over n keys keep at most about budget bytes of
// keys at once.
func passCount(n, budget uint64) int {
	per := max(budget/keyBytes, 1)
	return int(max((n+per-1)/per, 1))
}

// sliceBounds is pass p's slice of the key space, of passes equal ones in
// ascending order: the hashes whose first 4 bytes (big-endian) are in [lo, hi).
func sliceBounds(p, passes int) (lo, hi uint64) {
	return (uint64(p) << 32) / uint64(passes), (uint64(p+1) << 32) / uint64(passes)
}

func inSlice(hash *[32]byte, lo, hi uint64) bool {
	top := uint64(hash[0])<<24 | uint64(hash[1])<<16 | uint64(hash[2])<<8 | uint64(hash[3])
	return top >= lo && top < hi
}

// collect hashes every key of s and returns those in [lo, hi), in hash order:
// one worker per CPU over its share of the indexes.
func (s keySource) collect(lo, hi uint64, passes int) []item {
	workers := runtime.GOMAXPROCS(0)
	chunk := (s.n + workers - 1) / workers
	parts := make([][]item, workers+1)
	var wg sync.WaitGroup
	for wk := 0; wk < workers; wk++ {
		from, to := min(wk*chunk, s.n), min((wk+1)*chunk, s.n)
		wg.Add(1)
		go func(wk, from, to int) {
			defer wg.Done()
			expect := (to - from) / passes
			if passes > 1 {
				expect += expect/50 + 64 // the slice's share, give or take
			}
			kept := make([]item, 0, expect)
			h := crypto.NewKeccakState()
			for k := from; k < to; k++ {
				it := s.derived(h, k)
				if inSlice(&it.hash, lo, hi) {
					kept = append(kept, it)
				}
			}
			parts[wk] = kept
		}(wk, from, to)
	}
	wg.Wait()
	for _, it := range s.explicit {
		if inSlice(&it.hash, lo, hi) {
			parts[workers] = append(parts[workers], it)
		}
	}
	return sortItems(parts)
}

// eachSorted calls f for every key of s in hash order, in as many passes over
// slices of the key space as budget bytes of keys require, each pass hashing
// every key and keeping those of its slice. One progress for all passes.
func eachSorted(s keySource, budget uint64, what string, f func(it item) error) error {
	total := uint64(s.n + len(s.explicit))
	passes := passCount(total, budget)
	prog := newProgress(what, total)
	prog.passes = passes
	var prev [32]byte
	var items []item
	for p := 0; p < passes; p++ {
		lo, hi := sliceBounds(p, passes)
		if passes > 1 {
			logf("%s: pass %d of %d: hashing %d keys, keeping those from %08x to %08x", what, p+1, passes, total, lo, hi-1)
			// The last pass's keys go before this pass's come: else the heap
			// holds both until the collector runs, twice the budget.
			items = nil
			runtime.GC()
		}
		t := time.Now()
		items = s.collect(lo, hi, passes)
		prog.hashed(p, time.Since(t))
		for k := range items {
			if (p > 0 || k > 0) && items[k].hash == prev {
				return fmt.Errorf("%s: two keys with the hash %x", what, items[k].hash)
			}
			if err := f(items[k]); err != nil {
				return err
			}
			prev = items[k].hash
			prog.step()
		}
	}
	return nil
}

// sortItems returns the parts' items in hash order: scattered into 65536
// buckets by their first two bytes, each bucket then sorted, the buckets
// shared among the CPUs. Input and output exist at once while scattering (36
// bytes an item each); the input can be dropped afterwards.
func sortItems(parts [][]item) []item {
	var counts [65536]int
	for _, in := range parts {
		for i := range in {
			counts[int(in[i].hash[0])<<8|int(in[i].hash[1])]++
		}
	}
	var starts [65537]int
	for b := range counts {
		starts[b+1] = starts[b] + counts[b]
	}
	out := make([]item, starts[65536])
	pos := starts
	for j, in := range parts {
		for i := range in {
			b := int(in[i].hash[0])<<8 | int(in[i].hash[1])
			out[pos[b]] = in[i]
			pos[b]++
		}
		parts[j] = nil
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for wk := 0; wk < workers; wk++ {
		wg.Add(1)
		go func(wk int) {
			defer wg.Done()
			for b := wk; b < 65536; b += workers {
				part := out[starts[b]:starts[b+1]]
				slices.SortFunc(part, func(x, y item) int { return bytes.Compare(x.hash[:], y.hash[:]) })
			}
		}(wk)
	}
	wg.Wait()
	return out
}
