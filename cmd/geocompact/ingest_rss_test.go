package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/geocompact/geocompact/validate/validatetest"
)

// TestIngestPeakRSS measures the peak resident memory of ingest and of
// validate on a file of 20,001 row groups, as child processes. It is a
// measurement, not a check, and runs only when asked:
//
//	GEOCOMPACT_INGEST_RSS=1 go test ./cmd/geocompact -run TestIngestPeakRSS -v
//
// GEOCOMPACT_INGEST_RSS_ROWS sets the rows per row group (default 200);
// GEOCOMPACT_BIN runs another geocompact binary (an older build, to
// compare) instead of this test binary. docs/reliability.md has the
// figures. It needs GNU time at /usr/bin/time.
func TestIngestPeakRSS(t *testing.T) {
	if os.Getenv("GEOCOMPACT_INGEST_RSS") == "" {
		t.Skip("a measurement; set GEOCOMPACT_INGEST_RSS=1")
	}
	perGroup := int64(200)
	if v, err := strconv.ParseInt(os.Getenv("GEOCOMPACT_INGEST_RSS_ROWS"), 10, 64); err == nil && v > 0 {
		perGroup = v
	}
	const groups = 20001
	dir := t.TempDir()
	in := filepath.Join(dir, "many-groups.parquet")
	validatetest.Write(t, in, validatetest.File{Rows: validatetest.Points(int(groups * perGroup)), Geo: validatetest.Geo(""), Extra: true, RowGroupRows: perGroup})
	st, err := os.Stat(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("input: %d rows in %d row groups, %.1f MB", groups*perGroup, groups, float64(st.Size())/1e6)
	wh := filepath.Join(dir, "wh")
	for _, args := range [][]string{
		{"validate", in},
		{"ingest", "--create", "--table", "rss.t", in},
	} {
		full := append([]string{"--warehouse", wh, "--config", noConfig(t)}, args...)
		// GNU time forks the command from a small process: a child of
		// this (large) test process would inherit its peak RSS.
		bin := os.Getenv("GEOCOMPACT_BIN")
		if bin == "" {
			bin = os.Args[0]
		}
		cmd := childCLI(t.Context())
		cmd.Path = "/usr/bin/time"
		cmd.Args = append([]string{"/usr/bin/time", "-f", "maxrss_kb=%M", bin}, full...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
		m := regexp.MustCompile(`maxrss_kb=(\d+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no maxrss in %q", out)
		}
		kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
		t.Logf("%s: peak RSS %d MiB, %v", args[0], kb/1024, time.Since(start).Round(time.Millisecond))
	}
}
