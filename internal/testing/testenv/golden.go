package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// DeltaGoldenEnv is the environment variable naming the folder of Delta
// Lake's golden tables when it is not shared/delta-golden beside the
// repository.
const DeltaGoldenEnv = "GEOCOMPACT_DELTA_GOLDEN"

// DeltaGolden returns the folder of Delta Lake's golden tables (the
// conformance tables of Delta's own test suite): the one DeltaGoldenEnv
// names, else shared/delta-golden beside the repository. A clone of the
// repository alone has no such folder: every test that needs it is then
// skipped with the same message naming the folder, or failed when InCI.
// The interop suite's tables written by delta-rs and Delta on Spark cover
// the same reading from real writers.
func DeltaGolden(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(DeltaGoldenEnv)
	if dir == "" {
		_, file, _, _ := runtime.Caller(0) // internal/testing/testenv/golden.go
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "delta-golden")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		SkipOrFail(t, "Delta golden tables not found at %s: set %s to their folder to run this test", dir, DeltaGoldenEnv)
	}
	return dir
}
