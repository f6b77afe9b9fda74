package reliability

import (
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/geocompact/geocompact/internal/testing/testenv"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"file:///w/t/data/a.parquet", "/w/t/data/a.parquet"},
		{"file:/w/t/data/a.parquet", "/w/t/data/a.parquet"},
		{"/w/t/data/a.parquet", "/w/t/data/a.parquet"},
		{"s3://b/w/t/data/a.parquet", "s3://b/w/t/data/a.parquet"},
	} {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// batch builds an (id, geometry) batch.
func batch(t *testing.T, ids []int64, geoms [][]byte) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "geometry", Type: arrow.BinaryTypes.Binary}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	b.Field(1).(*array.BinaryBuilder).AppendValues(geoms, nil)
	return b.NewRecordBatch()
}

func TestDigestIsOrderIndependentAndSeesChanges(t *testing.T) {
	g := [][]byte{{1, 2}, {3}, {4, 5, 6}}
	digestOf := func(batches ...arrow.RecordBatch) Digest {
		d := Digest{IDs: map[int64]int{}}
		for _, b := range batches {
			if err := digestBatch(&d, b, make([]byte, 8)); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		return d
	}
	base := digestOf(batch(t, []int64{1, 2, 3}, g))
	reordered := digestOf(batch(t, []int64{3}, g[2:]), batch(t, []int64{2, 1}, [][]byte{g[1], g[0]}))
	if !base.Equal(reordered) {
		t.Fatalf("reordered rows: %v, want %v", reordered, base)
	}
	changed := digestOf(batch(t, []int64{1, 2, 3}, [][]byte{{1, 2}, {3}, {4, 5, 7}}))
	if base.Equal(changed) {
		t.Fatal("a changed geometry left the digest equal")
	}
	dup := digestOf(batch(t, []int64{1, 2, 2}, g))
	if got := dup.Duplicates(); !slices.Equal(got, []int64{2}) {
		t.Fatalf("Duplicates() = %v, want [2]", got)
	}
}

func TestServerStopsAndRestarts(t *testing.T) {
	bin := FindVersityGW()
	if bin == "" {
		testenv.SkipOrFail(t, "versitygw not found; run scripts/start-s3.sh to install it")
	}
	srv, err := StartServer(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	up := func() bool {
		resp, err := http.Get(srv.Endpoint() + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	}
	if !up() {
		t.Fatal("server does not answer after start")
	}
	srv.Stop()
	if up() {
		t.Fatal("server answers after Stop")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if !up() {
		t.Fatal("server does not answer after Restart")
	}
}

// TestFreeAddrAvoidsEphemeralPorts checks that a server's port is below
// the kernel's ephemeral range, so that no listener on port 0 takes it
// while the server is stopped and answers in its place.
func TestFreeAddrAvoidsEphemeralPorts(t *testing.T) {
	lo := ephemeralLow()
	if lo <= 10000 {
		t.Skipf("ephemeral ports start at %d: nothing below them to choose from", lo)
	}
	for range 20 {
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := strconv.Atoi(port); p < 10000 || p >= lo {
			t.Fatalf("freeAddr() = %s: want a port in [10000, %d)", addr, lo)
		}
	}
}
