// gochain: a known call chain for stax's tests of Go stacks:
// main.main -> main.a -> main.b -> main.hot, hot a leaf loop that
// computes without calling (no frame of its own on arm64: its caller is
// in the link register). Runs about SECONDS of CPU time.
//   gochain SECONDS
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func hot(n int) int {
	x := n
	for i := 0; i < 200000; i++ {
		x = x*1103515245 + 12345
		x ^= x >> 13
	}
	return x
}

//go:noinline
func b(n int) int { return hot(n) + 1 }

//go:noinline
func a(n int) int { return b(n) + 1 }

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	sum := 0
	for time.Now().Before(end) {
		sum += a(sum)
	}
	fmt.Println(sum & 1)
}
