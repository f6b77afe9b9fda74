package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact"
)

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", false, "--version")
	assert.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Regexp(t, `^geocompact \S+\n  github.com/apache/iceberg-go v0\.\d+\.\d+\S*\n  github.com/apache/arrow-go/v18 v18\.\d+\.\d+\S*\n$`, r.Stdout)
}

func TestVersionText(t *testing.T) {
	t.Parallel()
	info := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Deps: []*debug.Module{
		{Path: "github.com/apache/iceberg-go", Version: "v0.7.0", Replace: &debug.Module{Path: "example.com/iceberg-go", Version: "v0.7.1-fork"}},
	}}
	assert.Equal(t, "geocompact v1.2.3\n  github.com/apache/iceberg-go v0.7.1-fork\n  github.com/apache/arrow-go/v18 unknown\n", versionText(info, true))
	assert.Equal(t, "geocompact "+geocompact.Version()+"-devel\n  github.com/apache/iceberg-go unknown\n  github.com/apache/arrow-go/v18 unknown\n", versionText(nil, false))
	// go build and go run stamp "(devel)": the VERSION file names the tree.
	dev := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	assert.Regexp(t, `^geocompact \d+\.\d+\.\d+-devel\n`, versionText(dev, true))
}
