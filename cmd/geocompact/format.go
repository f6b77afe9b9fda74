package main

import (
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/optval"
)

// displayName is a file name as the reports print it: as it is when every
// character prints, otherwise quoted in Go syntax, so that a name holding a
// line break or a terminal escape cannot forge or hide a line.
func displayName(name string) string {
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return strconv.Quote(name)
		}
	}
	return name
}

// formatBound renders a bbox as minx,miny,maxx,maxy.
func formatBound(b spatial.Bound) string {
	if b.IsEmpty() {
		return "-"
	}
	return fmt.Sprintf("%.6g,%.6g,%.6g,%.6g", b.MinX, b.MinY, b.MaxX, b.MaxY)
}

// progress draws a one-line progress bar on stderr, only when stderr is a
// terminal and the output is not JSON.
type progress struct {
	mu      sync.Mutex
	g       *globalOptions
	verb    string
	unit    string
	enabled bool
	last    time.Time
}

func newProgress(g *globalOptions, verb, unit string) *progress {
	return &progress{g: g, verb: verb, unit: unit, enabled: g.IO.ErrTTY && !g.JSON && !g.Quiet}
}

// Update redraws the bar at most ten times a second, and always at the end.
func (p *progress) Update(done, total int) {
	if p == nil || !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if done < total && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	const width = 30
	filled := width * done / max(total, 1)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < filled {
			bar[i] = '='
		}
	}
	fmt.Fprintf(p.g.IO.ErrOut, "\r%s [%s] %d/%d %s", p.verb, bar, done, total, p.unit)
}

// Done ends the bar's line.
func (p *progress) Done() {
	if p != nil && p.enabled && !p.last.IsZero() {
		fmt.Fprintln(p.g.IO.ErrOut)
	}
}

// Phase redraws a one-line status (no bar) at most ten times a second.
func (p *progress) Phase(text string) {
	if p == nil || !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.g.IO.ErrOut, "\r\x1b[K%s: %s", p.verb, text)
}

// rewriteProgress renders the engine's rewrite progress as one status line.
func rewriteProgress(p *progress) func(engine.Progress) {
	return func(e engine.Progress) { p.Phase(rewriteProgressText(e)) }
}

// rewriteProgressText is a rewrite's progress as one line: groups and
// bytes done, and the phase of the group at hand.
func rewriteProgressText(e engine.Progress) string {
	text := fmt.Sprintf("%d/%d groups done", e.GroupsDone, e.Groups)
	if e.Bytes > 0 {
		text += fmt.Sprintf(" (%s of %s)", optval.FormatBytes(e.BytesDone), optval.FormatBytes(e.Bytes))
	}
	switch {
	case e.Phase == "done":
	case e.Group == 0:
		text += "; " + e.Phase
	case e.Steps > 0:
		text += fmt.Sprintf("; group %d: %s unit %d of %d", e.Group, e.Phase, e.Step, e.Steps)
	default:
		text += fmt.Sprintf("; group %d: %s", e.Group, e.Phase)
	}
	return text
}

// maintainProgress renders a maintain run's progress as one status line:
// the step, and within the rewrite step the rewrite's progress.
func maintainProgress(p *progress) func(maintain.Progress) {
	return func(e maintain.Progress) { p.Phase(maintainProgressText(e)) }
}

func maintainProgressText(e maintain.Progress) string {
	text := fmt.Sprintf("step %d/%d %s", e.Index, e.Steps, e.Step)
	if e.Rewrite != nil {
		text += ": " + rewriteProgressText(*e.Rewrite)
	}
	return text
}

// sizeFlag is a byte-count flag that takes units (see engine.ParseSize); a
// malformed value is a flag error, so a usage error.
type sizeFlag struct{ n *int64 }

func (f sizeFlag) String() string {
	if f.n == nil {
		return "0"
	}
	return strconv.FormatInt(*f.n, 10)
}

func (f sizeFlag) Set(s string) error {
	n, err := optval.ParseSize(s)
	if err != nil {
		return err
	}
	*f.n = n
	return nil
}

func (sizeFlag) Type() string { return "size" }
