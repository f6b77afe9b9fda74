//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// pseudoTerminal is a pty pair: what a command writes to Slave is read
// from Master into Out.
type pseudoTerminal struct {
	Master, Slave *os.File
	mu            sync.Mutex
	out           bytes.Buffer
	done          chan struct{}
}

// openPTY allocates a pseudo-terminal (posix_openpt, unlockpt, ptsname)
// and starts copying what is written to its slave side.
func openPTY() (*pseudoTerminal, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("ptsname: %w", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, err
	}
	p := &pseudoTerminal{Master: master, Slave: slave, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			k, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:k])
			p.mu.Unlock()
			if err != nil {
				return // EIO once the slave side is closed
			}
		}
	}()
	return p, nil
}

// Close closes the slave side, waits for the copy to drain, and returns
// everything written to the terminal.
func (p *pseudoTerminal) Close() string {
	p.Slave.Close()
	<-p.done
	p.Master.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// runOnTerminal runs the CLI with stderr on a fresh pseudo-terminal and
// returns the exit code, stdout and what the terminal showed. Without a
// pty the test skips, except under CI, where it fails.
func runOnTerminal(t testing.TB, warehouse string, args ...string) (int, string, string) {
	t.Helper()
	p, err := openPTY()
	if err != nil {
		if os.Getenv("CI") != "" || !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
			t.Fatalf("open a pseudo-terminal: %v", err)
		}
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if !isTerminal(p.Slave) {
		p.Close()
		t.Fatal("the pty's slave side is not detected as a terminal")
	}
	var out bytes.Buffer
	ios := &ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: p.Slave, ErrTTY: isTerminal(p.Slave)}
	full := append([]string{"--warehouse", warehouse, "--config", noConfig(t)}, args...)
	code := run(t.Context(), full, ios)
	return code, out.String(), p.Close()
}
