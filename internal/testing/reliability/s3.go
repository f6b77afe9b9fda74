package reliability

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/geocompact/geocompact/internal/testing/testenv"
)

// Environment variables that point the S3 tests at a running server, as
// scripts/start-s3.sh exports them.
const (
	EnvS3Endpoint = "GEOCOMPACT_TEST_S3_ENDPOINT"
	EnvS3Bucket   = "GEOCOMPACT_TEST_S3_BUCKET"
	// EnvVersityGW names the versitygw binary when it is neither in the
	// cache directory nor on PATH.
	EnvVersityGW = "GEOCOMPACT_VERSITYGW"
)

// S3 describes an S3-compatible endpoint the tests may write to. Secret is
// never printed by the harness.
type S3 struct {
	Endpoint  string // http://127.0.0.1:PORT
	Bucket    string
	AccessKey string
	Secret    string
	Region    string
	// Prefix is a key prefix no other test uses, without slashes at
	// either end.
	Prefix string

	server *Server
}

// Warehouse returns the s3:// URI of a warehouse under the test's prefix.
func (s *S3) Warehouse() string { return "s3://" + s.Bucket + "/" + s.Prefix }

// Server returns the server this process started for the test, or nil when
// the endpoint came from the environment.
func (s *S3) Server() *Server { return s.server }

// Setenv exports the credentials and region the way the AWS SDK reads
// them, for the rest of the test (in-process commands and child processes
// alike).
func (s *S3) Setenv(t testing.TB) {
	t.Helper()
	t.Setenv(EnvS3Endpoint, s.Endpoint)
	t.Setenv(EnvS3Bucket, s.Bucket)
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.Secret)
	t.Setenv("AWS_REGION", s.Region)
	// Keep the developer's own AWS profile out of the tests.
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
}

// UseS3 returns an S3 endpoint for the test: the one named by
// GEOCOMPACT_TEST_S3_ENDPOINT when set (as .ci/run does after
// scripts/start-s3.sh), else a versitygw server started for this test when
// the binary can be found. Without either it skips the test, except under
// CI=true, where a missing object store is a failure. The credentials are
// exported with Setenv.
func UseS3(t testing.TB) *S3 {
	t.Helper()
	if ep := os.Getenv(EnvS3Endpoint); ep != "" {
		s := &S3{
			Endpoint:  ep,
			Bucket:    os.Getenv(EnvS3Bucket),
			AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"),
			Secret:    os.Getenv("AWS_SECRET_ACCESS_KEY"),
			Region:    envOr("AWS_REGION", "us-east-1"),
			Prefix:    uniquePrefix(t),
		}
		if s.Bucket == "" || s.AccessKey == "" || s.Secret == "" {
			t.Fatalf("%s is set but %s, AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not", EnvS3Endpoint, EnvS3Bucket)
		}
		s.Setenv(t)
		return s
	}
	return StartS3(t)
}

// StartS3 starts a private versitygw server for the test (posix backend in
// t.TempDir(), random loopback port, random credentials) and stops it when
// the test ends. Tests that stop the server on purpose use it rather than
// UseS3. It skips (or fails under CI=true) when versitygw is not installed.
func StartS3(t testing.TB) *S3 {
	t.Helper()
	bin := FindVersityGW()
	if bin == "" {
		msg := "no S3 server: versitygw not found (run scripts/start-s3.sh, which installs it into ~/.cache/geocompact/bin, or set " + EnvS3Endpoint + ")"
		testenv.SkipOrFail(t, "%s", msg)
	}
	srv, err := StartServer(bin, t.TempDir())
	if err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	t.Cleanup(srv.Stop)
	s := &S3{
		Endpoint: srv.Endpoint(), Bucket: srv.Bucket, AccessKey: srv.AccessKey, Secret: srv.Secret,
		Region: "us-east-1", Prefix: uniquePrefix(t), server: srv,
	}
	s.Setenv(t)
	return s
}

// FindVersityGW returns the path of the versitygw binary: $GEOCOMPACT_VERSITYGW,
// then ~/.cache/geocompact/bin/versitygw (where scripts/start-s3.sh installs
// it), then PATH; empty when none exists.
func FindVersityGW() string {
	if p := os.Getenv(EnvVersityGW); p != "" {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "geocompact", "bin", "versitygw")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	p, _ := exec.LookPath("versitygw")
	return p
}

// Server is a running versitygw process serving one bucket from a
// directory.
type Server struct {
	Addr      string // 127.0.0.1:PORT
	Root      string // the posix backend's directory; buckets are its subdirectories
	Bucket    string
	AccessKey string
	Secret    string

	bin string
	mu  sync.Mutex
	cmd *exec.Cmd
	log *os.File
}

// StartServer starts versitygw (bin) with its posix backend in dir on a free
// loopback port, creates the bucket "geocompact" and waits until it
// answers.
func StartServer(bin, dir string) (*Server, error) {
	s := &Server{
		Root:      filepath.Join(dir, "root"),
		Bucket:    "geocompact",
		AccessKey: "GCTEST" + strings.ToUpper(randomHex(7)),
		Secret:    "gcsecret" + randomHex(16),
		bin:       bin,
	}
	// A bucket of the posix backend is a directory under its root.
	if err := os.MkdirAll(filepath.Join(s.Root, s.Bucket), 0o755); err != nil {
		return nil, err
	}
	var err error
	if s.log, err = os.Create(filepath.Join(dir, "versitygw.log")); err != nil {
		return nil, err
	}
	for range 5 {
		if s.Addr, err = freeAddr(); err != nil {
			return nil, err
		}
		if err = s.Restart(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// Endpoint is the server's URL.
func (s *Server) Endpoint() string { return "http://" + s.Addr }

// Restart starts the server again on the same address and root after
// Stop (or starts it the first time).
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("versitygw is already running")
	}
	cmd := exec.Command(s.bin, "--port", s.Addr, "--quiet", "posix", s.Root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.Secret)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		// Any HTTP answer (403 for an unsigned request) means it serves.
		resp, err := http.Get(s.Endpoint() + "/")
		if err == nil {
			resp.Body.Close()
			s.cmd = cmd
			go func() { <-exited }() //nolint:errcheck // reap it; a server that served needs no exit status
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("versitygw exited at start (%v); see %s", err, s.log.Name())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return fmt.Errorf("versitygw did not answer on %s within 15s; see %s", s.Addr, s.log.Name())
		}
	}
}

// Stop kills the server; the data stays in Root. It is safe to call twice.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	// Wait until the port is free so Restart can bind it again.
	for range 100 {
		c, err := net.DialTimeout("tcp", s.Addr, 50*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	s.cmd = nil
}

// freeAddr returns a free loopback address for a server that Stop and
// Restart take down and up again. Its port is below the kernel's range of
// ephemeral ports when it can be: a port of that range, freed by Stop, can
// be taken meanwhile by any other listener on port 0 (another test's
// server), which then answers in its place and the server seems up.
func freeAddr() (string, error) {
	if lo := ephemeralLow(); lo > 10000 {
		for range 64 {
			addr := fmt.Sprintf("127.0.0.1:%d", 10000+mrand.IntN(lo-10000))
			if l, err := net.Listen("tcp", addr); err == nil {
				l.Close()
				return addr, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// ephemeralLow is the lowest port the kernel hands out for port 0, or 0
// when it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return lo
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func uniquePrefix(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return "t/" + strings.ToLower(name) + "-" + randomHex(4)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// CatalogName is the catalog name WriteConfig gives the S3-backed catalog.
const CatalogName = "s3lake"

// WriteConfig writes a geocompact config file into dir with one catalog,
// CatalogName: the SQL catalog on a SQLite file in dir with its warehouse
// under s's prefix. The endpoint and, when credsInFile is set, the key pair
// are ${ENV} references expanded when the file is read, so no secret is
// written to disk; otherwise the AWS SDK finds them in the environment. It
// returns the file's path.
func (s *S3) WriteConfig(t testing.TB, dir string, credsInFile bool) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "catalogs:\n  %s:\n    type: sql\n    warehouse: %s\n    properties:\n", CatalogName, s.Warehouse())
	fmt.Fprintf(&b, "      uri: file:%s?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)\n", filepath.Join(dir, "catalog.db"))
	b.WriteString("      sql.dialect: sqlite\n")
	b.WriteString("      s3.endpoint: ${" + EnvS3Endpoint + "}\n")
	b.WriteString("      s3.region: ${AWS_REGION}\n")
	b.WriteString("      s3.force-virtual-addressing: \"false\"\n")
	if credsInFile {
		b.WriteString("      s3.access-key-id: ${AWS_ACCESS_KEY_ID}\n")
		b.WriteString("      s3.secret-access-key: ${AWS_SECRET_ACCESS_KEY}\n")
	}
	p := filepath.Join(dir, "geocompact.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
