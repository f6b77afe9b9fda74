package table

import (
	"context"
	"slices"
	"sync"
)

// Created collects the paths of the data files a format's writer creates
// under a context from Track, from the moment each is created: a write
// that fails part-way (a full disk, an I/O error) leaves a partial file
// that no OutFile names, and the operation deletes it from here.
type Created struct {
	mu    sync.Mutex
	paths []string
}

type createdKey struct{}

// Track returns ctx carrying a new Created that records the data files
// written under it.
func Track(ctx context.Context) (context.Context, *Created) {
	c := &Created{}
	return context.WithValue(ctx, createdKey{}, c), c
}

// CreatedFrom returns the Created ctx carries, or nil; a writer calls Add
// on it for each file before writing it.
func CreatedFrom(ctx context.Context) *Created {
	c, _ := ctx.Value(createdKey{}).(*Created)
	return c
}

// Add records that the file at p was created; a nil c ignores it.
func (c *Created) Add(p string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.paths = append(c.paths, p)
	c.mu.Unlock()
}

// Paths returns the paths created so far (none for a nil c).
func (c *Created) Paths() []string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.paths)
}
