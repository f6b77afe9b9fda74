package maintain_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
)

// createRef points a new tag or branch called ref at snapshot id.
func createRef(t testing.TB, cat catalog.Catalog, name, ref string, id int64, typ table.RefType) {
	t.Helper()
	ident, _ := catalogs.ParseIdentifier(name)
	_, _, err := cat.CommitTable(t.Context(), ident, nil, []table.Update{table.NewSetSnapshotRefUpdate(ref, id, typ, 0, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
}

// setProps commits table properties.
func setProps(t testing.TB, cat catalog.Catalog, name string, props map[string]string) {
	t.Helper()
	ident, _ := catalogs.ParseIdentifier(name)
	if _, _, err := cat.CommitTable(t.Context(), ident, nil, []table.Update{table.NewSetPropertiesUpdate(props)}); err != nil {
		t.Fatal(err)
	}
}

func hasLeaseTag(tbl *table.Table) bool {
	for name := range tbl.Metadata().Refs() {
		if name == maintain.LeaseRef {
			return true
		}
	}
	return false
}

func TestLeaseExcludesSecondHolder(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 100, 3)
	a, err := maintain.AcquireLease(t.Context(), cat, name, "run-a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, err = maintain.AcquireLease(t.Context(), cat, name, "run-b", time.Hour)
	var le *maintain.LeaseError
	if !errors.As(err, &le) {
		t.Fatalf("second acquire: err = %v, want a LeaseError", err)
	}
	if le.Owner != "run-a" || !catalogs.IsRetryable(err) || !strings.Contains(err.Error(), "run-a") {
		t.Fatalf("LeaseError %q: owner %q, retryable %v; want owner run-a, retryable", err, le.Owner, catalogs.IsRetryable(err))
	}
	if d := time.Until(le.Expires); d < 50*time.Minute || d > time.Hour {
		t.Errorf("lease expires in %s, want about an hour", d)
	}
	if err := a.Renew(t.Context(), map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(t.Context(), map[string]string{maintain.PropLastExpireMs: "1"}); err != nil {
		t.Fatal(err)
	}
	tbl := load(t, cat, name)
	if hasLeaseTag(tbl) || tbl.Properties()[maintain.PropLeaseOwner] != "" {
		t.Fatalf("released lease left tag or owner: props %v", tbl.Properties())
	}
	if tbl.Properties()[maintain.PropLastExpireMs] != "1" || tbl.Properties()["k"] != "v" {
		t.Errorf("renew/release did not record their properties: %v", tbl.Properties())
	}
	b, err := maintain.AcquireLease(t.Context(), cat, name, "run-b", time.Hour)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if b.TookOverFrom != "" {
		t.Errorf("fresh lease says it took over from %q", b.TookOverFrom)
	}
}

func TestLeaseExpiredIsTakenOver(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 100, 3)
	a, err := maintain.AcquireLease(t.Context(), cat, name, "crashed", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The holder crashed an hour ago: its lease lapsed.
	setProps(t, cat, name, map[string]string{maintain.PropLeaseExpiresMs: strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)})
	b, err := maintain.AcquireLease(t.Context(), cat, name, "next", time.Hour)
	if err != nil {
		t.Fatalf("take over lapsed lease: %v", err)
	}
	if b.TookOverFrom != "crashed" {
		t.Errorf("TookOverFrom = %q, want crashed", b.TookOverFrom)
	}
	if got := load(t, cat, name).Properties()[maintain.PropLeaseOwner]; got != "next" {
		t.Errorf("owner = %q, want next", got)
	}
	// The old holder notices it lost the lease and changes nothing.
	if err := a.Renew(t.Context(), nil); !errors.Is(err, maintain.ErrLeaseLost) {
		t.Errorf("renew of a lost lease: err = %v, want ErrLeaseLost", err)
	}
	if err := a.Release(t.Context(), nil); !errors.Is(err, maintain.ErrLeaseLost) {
		t.Errorf("release of a lost lease: err = %v, want ErrLeaseLost", err)
	}
	if !hasLeaseTag(load(t, cat, name)) {
		t.Error("the lost holder's release removed the new holder's lease")
	}
}

func TestLeaseRaceHasOneWinner(t *testing.T) {
	t.Parallel()
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) { testLeaseRace(t, c) })
	}
}

func testLeaseRace(t *testing.T, c testenv.Catalog) {
	const name = "t.x"
	cat := fragmentedOn(t, c, name, 100, 3)
	const n = 4
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := maintain.AcquireLease(t.Context(), cat, name, "run-"+strconv.Itoa(i), time.Hour)
			errs <- err
		}()
	}
	won := 0
	for range n {
		err := <-errs
		switch {
		case err == nil:
			won++
		case !errors.Is(err, maintain.ErrLeaseHeld) && !catalogs.IsRetryable(err):
			t.Errorf("loser got %v, want a retryable lease refusal", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d runs acquired the lease, want exactly 1", won)
	}
}

func TestLeaseSurvivesRefExpiry(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 100, 3)
	// Refs older than a millisecond expire on this table.
	setProps(t, cat, name, map[string]string{"history.expire.max-ref-age-ms": "1"})
	l, err := maintain.AcquireLease(t.Context(), cat, name, "run", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := maintain.Expire(t.Context(), cat, name, maintain.ExpireConfig{RetainLast: 1, Force: true}); err != nil {
		t.Fatal(err)
	}
	if !hasLeaseTag(load(t, cat, name)) {
		t.Fatal("expiry removed the lease tag")
	}
	if err := l.Release(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestLeaseOfDeadHolderIsTakenOver: a run of this host that was killed or
// crashed holds a lease that has not lapsed; the next run sees its process
// is gone and takes the lease over at once instead of exiting 4 for hours.
func TestLeaseOfDeadHolderIsTakenOver(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 100, 3)
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%s:%d:%d:cafe", host, dead.Process.Pid, 12345)
	if _, err := maintain.AcquireLease(t.Context(), cat, name, owner, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	b, err := maintain.AcquireLease(t.Context(), cat, name, maintain.NewLeaseOwner(), time.Hour)
	if err != nil {
		t.Fatalf("take over the lease of a dead holder: %v", err)
	}
	if b.TookOverFrom != owner || !b.HolderGone {
		t.Errorf("TookOverFrom = %q, HolderGone = %v; want %q, true", b.TookOverFrom, b.HolderGone, owner)
	}
	// A live holder of this host keeps its lease.
	if _, err := maintain.AcquireLease(t.Context(), cat, name, maintain.NewLeaseOwner(), time.Hour); !errors.Is(err, maintain.ErrLeaseHeld) {
		t.Fatalf("second acquire while this process holds the lease: err = %v, want ErrLeaseHeld", err)
	}
}

// TestExpireNamesTheLeaseItKeeps: a killed maintain run's lease tag keeps
// the snapshot it points at; expire says so, naming the tag, its holder
// and when it lapses, rather than retaining it without a word.
func TestExpireNamesTheLeaseItKeeps(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 100, 3)
	first := load(t, cat, name).Metadata().Snapshots()[0].SnapshotID
	createRef(t, cat, name, maintain.LeaseRef, first, table.TagRef)
	lapse := time.Now().Add(time.Hour)
	setProps(t, cat, name, map[string]string{
		maintain.PropLeaseOwner:     "host:4242:1:cafe",
		maintain.PropLeaseExpiresMs: strconv.FormatInt(lapse.UnixMilli(), 10),
	})
	res, err := maintain.Expire(t.Context(), cat, name, maintain.ExpireConfig{RetainLast: 1, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	var held *maintain.HeldSnapshot
	for i := range res.HeldByRefs {
		if res.HeldByRefs[i].Ref == maintain.LeaseRef {
			held = &res.HeldByRefs[i]
		}
	}
	if held == nil {
		t.Fatalf("HeldByRefs = %+v, want the lease tag", res.HeldByRefs)
	}
	if held.SnapshotID != first {
		t.Errorf("held snapshot %d, want %d", held.SnapshotID, first)
	}
	for _, want := range []string{"maintain lease", "host:4242:1:cafe", lapse.UTC().Format(time.RFC3339)} {
		if !strings.Contains(held.Reason, want) {
			t.Errorf("reason %q does not name %q", held.Reason, want)
		}
	}
}
