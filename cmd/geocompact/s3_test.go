package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// s3Args selects the S3-backed catalog of the config file cfg.
func s3Args(cfg string, args ...string) []string {
	return append([]string{"--config", cfg, "--catalog", reliability.CatalogName}, args...)
}

// TestS3EndToEnd drives every command over a warehouse on a real
// S3-compatible server (versitygw on loopback) through iceberg-go's object
// store IO, checking after each that the table still holds the same rows and
// that every file it names is in the bucket.
func TestS3EndToEnd(t *testing.T) {
	for _, credsInFile := range []bool{false, true} {
		name := "creds-from-env"
		if credsInFile {
			name = "creds-from-config"
		}
		t.Run(name, func(t *testing.T) {
			s3 := reliability.UseS3(t)
			cfg := s3.WriteConfig(t, t.TempDir(), credsInFile)
			testS3Commands(t, s3, cfg)
		})
	}
}

func testS3Commands(t *testing.T, s3 *reliability.S3, cfg string) {
	const name = "lake.pings"
	r := runCLI(t, "", false, s3Args(cfg, "generate", "--table", name, "--rows", "3000", "--commits", "12", "--seed", "7")...)
	if r.Code != exitOK {
		t.Fatalf("generate: exit %d, stderr %q", r.Code, r.Stderr)
	}
	cat := openConfigCatalog(t, cfg, reliability.CatalogName)
	tbl := loadTable(t, cat, name)
	if !strings.HasPrefix(tbl.Location(), s3.Warehouse()+"/") {
		t.Fatalf("table location %s is not under the warehouse %s", tbl.Location(), s3.Warehouse())
	}
	want := digest(t, tbl)
	if want.Rows != 3000 {
		t.Fatalf("generated %d rows, want 3000", want.Rows)
	}
	checkIntact(t, tbl, want)
	if srv := s3.Server(); srv != nil {
		// The objects really are in the server's store.
		n := countFiles(t, filepath.Join(srv.Root, s3.Bucket, filepath.FromSlash(s3.Prefix)), ".parquet")
		if n != 12 {
			t.Fatalf("bucket holds %d parquet objects, want 12", n)
		}
	}

	t.Run("rewrite", func(t *testing.T) {
		needCommand(t, "rewrite")
		for _, args := range [][]string{
			{"--strategy", "binpack", "--option", "partial-progress.enabled=true", "--option", "partial-progress.max-commits=2", "--option", "target-file-size-bytes=60000"},
			{"--curve", "hilbert", "--option", "rewrite-all=true"},
		} {
			r := runCLI(t, "", false, s3Args(cfg, append([]string{"--json", "rewrite", "--table", name}, args...)...)...)
			if r.Code != exitOK {
				t.Fatalf("rewrite %v: exit %d, stderr %q", args, r.Code, r.Stderr)
			}
			var res struct {
				Rewritten int  `json:"rewritten_data_files_count"`
				Added     int  `json:"added_data_files_count"`
				Verified  bool `json:"verified"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
				t.Fatalf("rewrite --json: %v in %q", err, r.Stdout)
			}
			if res.Rewritten == 0 || res.Added == 0 {
				t.Fatalf("rewrite %v rewrote %d files into %d, want some", args, res.Rewritten, res.Added)
			}
			checkIntact(t, loadTable(t, cat, name), want)
		}
	})

	t.Run("read-only", func(t *testing.T) {
		for _, args := range [][]string{
			{"validate", "--table", name},
			{"inspect", "files", "--table", name},
			{"metrics", "--table", name},
			{"advise", "--table", name},
		} {
			needCommand(t, args[0])
			if r := runCLI(t, "", false, s3Args(cfg, args...)...); r.Code != exitOK {
				t.Errorf("%v: exit %d, stderr %q", args, r.Code, r.Stderr)
			}
		}
		checkIntact(t, loadTable(t, cat, name), want)
	})

	t.Run("expire", func(t *testing.T) {
		needCommand(t, "expire")
		r := runCLI(t, "", false, s3Args(cfg, "expire", "--table", name, "--older-than", "0s", "--retain-last", "1", "--force")...)
		if r.Code != exitOK {
			t.Fatalf("expire: exit %d, stderr %q", r.Code, r.Stderr)
		}
		tbl := loadTable(t, cat, name)
		if n := len(tbl.Metadata().Snapshots()); n != 1 {
			t.Fatalf("%d snapshots after expire --retain-last 1, want 1", n)
		}
		checkIntact(t, tbl, want)
	})

	t.Run("orphans", func(t *testing.T) {
		needCommand(t, "orphans")
		tbl := loadTable(t, cat, name)
		planted := tbl.Location() + "/data/planted-orphan.parquet"
		writeObject(t, tbl.FS, planted, []byte("not referenced by any snapshot"))
		time.Sleep(1100 * time.Millisecond)
		r := runCLI(t, "", false, s3Args(cfg, "orphans", "--table", name, "--older-than", "1s", "--dry-run", "--force")...)
		if r.Code != exitOK || !strings.Contains(r.Stdout, "planted-orphan.parquet") {
			t.Fatalf("orphans --dry-run: exit %d, stdout %q, stderr %q; want the planted file listed", r.Code, r.Stdout, r.Stderr)
		}
		r = runCLI(t, "", false, s3Args(cfg, "orphans", "--table", name, "--older-than", "1s", "--force")...)
		if r.Code != exitOK {
			t.Fatalf("orphans: exit %d, stderr %q", r.Code, r.Stderr)
		}
		un, err := reliability.Unreferenced(t.Context(), loadTable(t, cat, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(un) != 0 {
			t.Fatalf("after orphans, unreferenced files remain: %v", un)
		}
		checkIntact(t, loadTable(t, cat, name), want)
	})

	t.Run("ingest", func(t *testing.T) {
		needCommand(t, "ingest")
		in := filepath.Join(t.TempDir(), "points.parquet")
		validatetest.Write(t, in, validatetest.File{Rows: validatetest.Points(20), Geo: validatetest.Geo(""), Extra: true})
		const ingested = "lake.ingested"
		r := runCLI(t, "", false, s3Args(cfg, "ingest", "--table", ingested, "--create", in)...)
		if r.Code != exitOK {
			t.Fatalf("ingest: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		tbl := loadTable(t, cat, ingested)
		if !strings.HasPrefix(tbl.Location(), s3.Warehouse()+"/") {
			t.Fatalf("ingested table location %s is not under the warehouse %s", tbl.Location(), s3.Warehouse())
		}
		d := digest(t, tbl)
		if d.Rows != 20 {
			t.Fatalf("ingested table has %d rows, want 20", d.Rows)
		}
		checkIntact(t, tbl, d)
	})

	t.Run("bench", func(t *testing.T) {
		needCommand(t, "bench")
		r := runCLI(t, "", false, s3Args(cfg, "--json", "bench", "--table", name, "--layouts", "unsorted,hilbert", "--window-count", "20")...)
		if r.Code != exitOK {
			t.Fatalf("bench: exit %d, stderr %q", r.Code, r.Stderr)
		}
		checkIntact(t, loadTable(t, cat, name), want)
	})
}

// TestS3SecretsStayOutOfOutput makes commands fail against S3 (a dead
// endpoint, then a wrong secret) with debug logging and checks that neither
// the access key nor the secret appears on stdout or stderr, while the error
// still names the problem.
func TestS3SecretsStayOutOfOutput(t *testing.T) {
	s3 := reliability.UseS3(t)
	cfg := s3.WriteConfig(t, t.TempDir(), true)
	secrets := []string{s3.Secret, s3.AccessKey}

	check := func(t *testing.T, r cliResult, wantInErr string, extra ...string) {
		t.Helper()
		if r.Code == exitOK {
			t.Fatalf("exit 0, want a failure; stdout %q", r.Stdout)
		}
		for _, s := range append(secrets, extra...) {
			if strings.Contains(r.Stdout, s) || strings.Contains(r.Stderr, s) {
				t.Fatalf("a credential appears in the output:\nstdout %q\nstderr %q", r.Stdout, r.Stderr)
			}
		}
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "geocompact: ") || !strings.Contains(strings.ToLower(last), wantInErr) {
			t.Fatalf("last line of stderr %q is not one error saying %q", last, wantInErr)
		}
		t.Logf("exit %d: %s", r.Code, last)
	}

	t.Run("dead-endpoint", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := l.Addr().String()
		l.Close()
		t.Setenv(reliability.EnvS3Endpoint, "http://"+dead)
		for _, args := range [][]string{
			{"generate", "--table", "lake.t", "--rows", "10", "--commits", "1"},
		} {
			r := runChild(t, s3Args(cfg, append([]string{"--log-level", "debug", "-v"}, args...)...)...)
			check(t, r, "connect")
		}
	})

	t.Run("wrong-secret", func(t *testing.T) {
		wrong := "wrongsecret" + strings.Repeat("x", 20)
		t.Setenv("AWS_SECRET_ACCESS_KEY", wrong)
		r := runChild(t, s3Args(cfg, "--log-level", "debug", "-v", "generate", "--table", "lake.t", "--rows", "10", "--commits", "1")...)
		check(t, r, "signature", wrong)
	})
}

// writeObject writes data to path through the table's file IO.
func writeObject(t testing.TB, fsF func(context.Context) (iceio.IO, error), path string, data []byte) {
	t.Helper()
	fsys, err := fsF(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	w, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		t.Fatalf("file IO %T cannot write", fsys)
	}
	if err := w.WriteFile(path, data); err != nil {
		t.Fatal(err)
	}
}

// countFiles counts the files under dir whose names end in suffix.
func countFiles(t testing.TB, dir, suffix string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, suffix) {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
