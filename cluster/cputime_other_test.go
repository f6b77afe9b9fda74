//go:build !linux

package cluster

import "testing"

// cpuClock reports nothing where the thread CPU clock is not available.
type cpuClock struct{}

func cpuMeter(b *testing.B, rows int) *cpuClock { return &cpuClock{} }
func (c *cpuClock) pause()                      {}
func (c *cpuClock) resume()                     {}
func (c *cpuClock) report()                     {}
