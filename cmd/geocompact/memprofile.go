package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// heapSample is how often heapProfile reads the heap's size.
const heapSample = 20 * time.Millisecond

// heapProfile starts watching the Go heap and returns what stops it and
// writes, into the file at path, the heap profile taken when the heap was
// largest (none when path is empty, as when GEOCOMPACT_MEMPROFILE is
// unset). A profile taken at exit would show what is left, not what the
// peak held: the heap's live bytes are read every heapSample, and each
// time they pass the largest seen by an eighth a profile replaces the one
// kept. A heap profile states the last garbage collection's live objects
// (inuse_space) and every allocation so far (alloc_space).
func heapProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "geocompact: GEOCOMPACT_MEMPROFILE: %v\n", err)
		return func() {}
	}
	// best and peak belong to the sampler until it has stopped, then to
	// the returned func.
	var (
		best []byte
		peak uint64
	)
	take := func(live uint64) {
		var b bytes.Buffer
		if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
			return
		}
		best, peak = b.Bytes(), live
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(heapSample)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(s)
			if live := s[0].Value.Uint64(); live > peak+peak/8 {
				take(live)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		if len(best) == 0 {
			take(0)
		}
		_, err := f.Write(best)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "geocompact: GEOCOMPACT_MEMPROFILE: %v\n", err)
		}
	}
}
