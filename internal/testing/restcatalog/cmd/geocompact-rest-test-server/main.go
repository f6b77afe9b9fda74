// Command geocompact-rest-test-server runs the test-only Iceberg REST
// catalog of package restcatalog as its own process, for .ci/run and for
// trying geocompact's REST configuration by hand:
//
//	go run ./internal/testing/restcatalog/cmd/geocompact-rest-test-server \
//	    --listen 127.0.0.1:0 --warehouse /tmp/wh --credential id:secret --addr-file /tmp/rest.addr
//
// It prints "listening on http://HOST:PORT" to stderr once it serves, writes
// http://HOST:PORT to --addr-file when given, and stops on SIGINT or
// SIGTERM. Object-store settings for the SQL catalog come from --prop
// (s3.endpoint=..., s3.region=...) and the AWS SDK's environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/geocompact/geocompact/internal/testing/restcatalog"
)

// propFlags collects repeated --prop k=v flags.
type propFlags map[string]string

func (p propFlags) String() string { return fmt.Sprint(map[string]string(p)) }

func (p propFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("--prop %q: want KEY=VALUE", s)
	}
	p[k] = v
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "geocompact-rest-test-server:", err)
		os.Exit(1)
	}
}

func run() error {
	props := propFlags{}
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	wh := flag.String("warehouse", "", "the server's warehouse: a directory or an s3:// URI (required)")
	prefix := flag.String("prefix", "", "route prefix sent in the config overrides (default none)")
	cred := flag.String("credential", "", "OAuth2 client credential ID:SECRET; empty serves without authentication")
	ttl := flag.Duration("token-ttl", 0, "lifetime of issued tokens (0: no expiry)")
	state := flag.String("state-dir", "", "directory for the catalogs of object-store warehouses (default: a temporary one)")
	addrFile := flag.String("addr-file", "", "file to write http://HOST:PORT to once listening")
	flag.Var(props, "prop", "KEY=VALUE given to the SQL catalog, e.g. s3.endpoint=http://127.0.0.1:9000 (repeatable)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	opts := restcatalog.Options{Warehouse: *wh, Prefix: *prefix, StateDir: *state, TokenTTL: *ttl, Props: props}
	if *cred != "" {
		id, secret, ok := strings.Cut(*cred, ":")
		if !ok || id == "" || secret == "" {
			return errors.New("--credential: want ID:SECRET")
		}
		opts.Credentials = map[string]string{id: secret}
	}
	srv, err := restcatalog.NewServer(opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	addr := "http://" + l.Addr().String()
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(addr+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "listening on", addr)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shut)
	}()
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
