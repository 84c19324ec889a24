// work.go - a Go workload for bench/run.sh section 12 (not a test):
// hashes, maps and sorting on several goroutines for N rounds.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
)

func round(seed int) uint64 {
	m := make(map[string]int)
	keys := make([]string, 0, 2000)
	var sum uint64
	for i := 0; i < 2000; i++ {
		h := sha256.Sum256([]byte(strconv.Itoa(seed*7919 + i)))
		k := fmt.Sprintf("%x", h[:6])
		m[k] += i
		keys = append(keys, k)
		sum += uint64(h[0])
	}
	sort.Strings(keys)
	for _, k := range keys[:100] {
		sum += uint64(m[k])
	}
	return sum
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total uint64
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var s uint64
			for i := 0; i < n; i++ {
				s += round(g*n + i)
			}
			mu.Lock()
			total += s
			mu.Unlock()
		}(g)
	}
	wg.Wait()
	fmt.Println(total)
}
