// Package faultio injects write failures (a full disk, an I/O error, a
// store that fails part-way) into the files an operation creates, so tests
// can check that a failed operation leaves nothing behind. A fault lives
// in a context: only the operation given that context sees it, so tests
// that inject faults run in parallel with others. The local FileIO of
// table/catalogs applies the fault of its operation's context to every
// file it creates (data files, manifests, metadata); without a fault in
// the context nothing changes.
package faultio

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
	"syscall"
)

// Fault fails writes once After bytes in all have been written through the
// files it wraps, with Err (syscall.ENOSPC, syscall.EIO, ...). A write that
// crosses the limit writes the bytes up to it and then fails, as a full
// disk does.
type Fault struct {
	After int64
	Err   error
	// AtCreate fails the creation of files instead (a store that refuses
	// new objects), once After bytes have been written.
	AtCreate bool

	written atomic.Int64
	mu      sync.Mutex
	hit     []string
}

type key struct{}

// With returns ctx carrying f.
func With(ctx context.Context, f *Fault) context.Context { return context.WithValue(ctx, key{}, f) }

// From returns the fault ctx carries, or nil.
func From(ctx context.Context) *Fault {
	f, _ := ctx.Value(key{}).(*Fault)
	return f
}

// Written is how many bytes the files it wraps took in all.
func (f *Fault) Written() int64 { return f.written.Load() }

// Hit lists the files whose writes or creation failed.
func (f *Fault) Hit() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.hit...)
}

func (f *Fault) fail(op, name string) error {
	f.mu.Lock()
	f.hit = append(f.hit, name)
	f.mu.Unlock()
	return &fs.PathError{Op: op, Path: name, Err: f.Err}
}

// Create returns the error a creation of name meets, if any.
func (f *Fault) Create(name string) error {
	if f == nil || !f.AtCreate || f.written.Load() < f.After {
		return nil
	}
	return f.fail("create", name)
}

// Writer wraps w, the writer of the file name, so that its writes fail as
// f says. A nil f returns w.
func (f *Fault) Writer(name string, w io.WriteCloser) io.WriteCloser {
	if f == nil {
		return w
	}
	return &writer{w: w, f: f, name: name}
}

type writer struct {
	w    io.WriteCloser
	f    *Fault
	name string
}

func (w *writer) Write(p []byte) (int, error) {
	if w.f.AtCreate { // counts, fails creates only
		n, err := w.w.Write(p)
		w.f.written.Add(int64(n))
		return n, err
	}
	room := w.f.After - w.f.written.Load()
	if room <= 0 {
		return 0, w.f.fail("write", w.name)
	}
	if int64(len(p)) > room {
		n, err := w.w.Write(p[:room])
		w.f.written.Add(int64(n))
		if err != nil {
			return n, err
		}
		return n, w.f.fail("write", w.name)
	}
	n, err := w.w.Write(p)
	w.f.written.Add(int64(n))
	return n, err
}

func (w *writer) Close() error { return w.w.Close() }

// String describes the fault for test names and logs.
func (f *Fault) String() string {
	what := "writes"
	if f.AtCreate {
		what = "creates"
	}
	return fmt.Sprintf("%s fail with %v after %d bytes", what, f.Err, f.After)
}

// Errors the tests inject.
var (
	ENOSPC error = syscall.ENOSPC
	EIO    error = syscall.EIO
)
