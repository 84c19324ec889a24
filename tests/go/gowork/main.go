// gowork: JSON, regexp and sha256 on several goroutines, for stax's tests
// of Go stacks (stack switches: systemstack, mcall, morestack; roots
// runtime.goexit, runtime.mstart, runtime.rt0_go).
//   gowork SECONDS
package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"
)

type item struct {
	Name  string            `json:"name"`
	Count int               `json:"count"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
}

var sink int

func doJSON(n int) int {
	items := make([]item, 64)
	for i := range items {
		items[i] = item{Name: "item" + strconv.Itoa(i+n), Count: i,
			Tags: []string{"a", "b", strconv.Itoa(n)}, Attrs: map[string]string{"k": "v"}}
	}
	b, _ := json.Marshal(items)
	var back []item
	_ = json.Unmarshal(b, &back)
	return len(back) + len(b)
}

var re = regexp.MustCompile(`([a-z]+)(\d+)@([a-z]+)\.(com|org)`)

func doRegexp(n int) int {
	s := fmt.Sprintf("hello world%d foo%d@bar.com xyz abc%d@example.org end", n, n, n)
	m := re.FindAllStringSubmatch(s, -1)
	return len(m)
}

func doSHA(buf []byte) int {
	h := sha256.Sum256(buf)
	return int(h[0])
}

func worker(id int, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	buf := make([]byte, 4096)
	local := 0
	for i := 0; ; i++ {
		select {
		case <-stop:
			sink += local
			return
		default:
		}
		buf[i%len(buf)] = byte(i)
		local += doJSON(i) + doRegexp(i) + doSHA(buf)
		if i%50 == 0 {
			// short-lived goroutines: newproc, stack growth, scheduling
			var w2 sync.WaitGroup
			for k := 0; k < 4; k++ {
				w2.Add(1)
				go func(k int) { defer w2.Done(); local += doRegexp(k) }(k)
			}
			w2.Wait()
		}
	}
}

func main() {
	secs := 3.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go worker(i, stop, &wg)
	}
	time.Sleep(time.Duration(secs * float64(time.Second)))
	close(stop)
	wg.Wait()
	fmt.Println("done", sink > 0)
}
