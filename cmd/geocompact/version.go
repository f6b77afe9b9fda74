package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/geocompact/geocompact"
)

// version is the release, set at link time with
// -ldflags "-X main.version=v1.2.3"; builds without it report the module
// version, or the source tree's VERSION marked as a development build
// ("0.1.0-devel") for `go build` and `go run`.
var version = ""

// versionModules are the dependencies --version reports.
var versionModules = []string{"github.com/apache/iceberg-go", "github.com/apache/arrow-go/v18"}

// versionText is what --version prints: geocompact's version and those of
// the Iceberg and Arrow libraries it was built with.
func versionText(info *debug.BuildInfo, ok bool) string {
	v := version
	deps := map[string]string{}
	if ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, d := range info.Deps {
			deps[d.Path] = d.Version
			if d.Replace != nil {
				deps[d.Path] = d.Replace.Version
			}
		}
	}
	if v == "" {
		v = geocompact.Version() + "-devel"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "geocompact %s\n", v)
	for _, m := range versionModules {
		dv := deps[m]
		if dv == "" {
			dv = "unknown"
		}
		fmt.Fprintf(&b, "  %s %s\n", m, dv)
	}
	return b.String()
}
