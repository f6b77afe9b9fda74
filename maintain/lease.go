package maintain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/table/catalogs"
)

// The maintain lease lives in the table's own metadata, so it works with
// every catalog and every warehouse (local or object store) without a lock
// service. Mutual exclusion comes from the tag LeaseRef: it is created with
// the requirement that it does not exist yet, which the catalog checks
// atomically with the commit, so of two runs racing for a table exactly one
// commits. (Iceberg has no requirement on table properties, so a property
// alone would be last-writer-wins.) The holder and the expiry are table
// properties written in the same commit. The tag points at the head the
// holder last saw and is moved forward before expiry, so it never keeps a
// snapshot alive that the run means to expire; releasing removes it.
const (
	// LeaseRef is the tag whose existence is the lease.
	LeaseRef = "geocompact-maintain-lease"
	// PropLeaseOwner names the holder: host, process id and a random token.
	PropLeaseOwner = "geocompact.maintain.lease-owner"
	// PropLeaseExpiresMs is when the lease lapses, in Unix milliseconds.
	PropLeaseExpiresMs = "geocompact.maintain.lease-expires-ms"
	// PropLastRewriteMs, PropLastExpireMs and PropLastOrphansMs record when
	// maintain last ran each step, in Unix milliseconds; the policy's
	// cadences are measured from them.
	PropLastRewriteMs = "geocompact.maintain.last-rewrite-ms"
	PropLastExpireMs  = "geocompact.maintain.last-expire-ms"
	PropLastOrphansMs = "geocompact.maintain.last-orphans-ms"
)

// leaseRefMaxAgeMs keeps the lease tag out of reach of ref expiry (which
// measures a ref's age from its snapshot's timestamp, and would otherwise
// drop the tag mid-run on a table with history.expire.max-ref-age-ms set).
const leaseRefMaxAgeMs = math.MaxInt64

var (
	// ErrLeaseHeld marks a table another maintain run holds. It wraps
	// ErrConflict: the run is safe to retry later (exit 4).
	ErrLeaseHeld = fmt.Errorf("%w: table is leased by another maintain run", catalogs.ErrConflict)
	// ErrLeaseLost marks a lease that lapsed and was taken over while the
	// run still worked; the run stops before its next step.
	ErrLeaseLost = fmt.Errorf("%w: maintain lease lost", catalogs.ErrConflict)
	// ErrNoSnapshot marks a table without a snapshot, which a lease cannot
	// be taken on (and which needs no maintenance).
	ErrNoSnapshot = errors.New("maintain: table has no snapshot")
)

// LeaseError reports that another run holds the table's lease.
type LeaseError struct {
	Table   string
	Owner   string
	Expires time.Time
}

func (e *LeaseError) Error() string {
	return fmt.Sprintf("table %s is being maintained by %s until %s; retry after that (a crashed run's lease lapses then, or at once when it ran on this host)",
		e.Table, e.Owner, e.Expires.UTC().Format(time.RFC3339))
}

func (e *LeaseError) Unwrap() error { return ErrLeaseHeld }

// Lease is a held maintain lease on one table.
type Lease struct {
	Table   string    `json:"table"`
	Owner   string    `json:"owner"`
	Expires time.Time `json:"expires"`
	// TookOverFrom names the holder of a lapsed lease this one replaced.
	TookOverFrom string `json:"took_over_from,omitempty"`
	// HolderGone says the replaced lease had not lapsed, but its holder,
	// a process of this host, no longer ran.
	HolderGone bool `json:"holder_gone,omitempty"`

	cat      catalog.Catalog
	ident    table.Identifier
	ttl      time.Duration
	snapshot int64
}

// NewLeaseOwner returns a holder name unique to this process and call:
// host, pid, the process's start time and a random token (see holderGone).
func NewLeaseOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return leaseOwner(host, os.Getpid(), processStart(os.Getpid()), hex.EncodeToString(b))
}

// AcquireLease takes the maintain lease on the table called name for ttl,
// as owner. A lease another owner holds returns a *LeaseError (which wraps
// ErrLeaseHeld and so ErrConflict); a lapsed one is taken over, and so is
// one whose holder was a process of this host that is gone (killed or
// crashed: see holderGone); Lease.TookOverFrom names the old holder and
// Lease.HolderGone says which of the two it was.
func AcquireLease(ctx context.Context, cat catalog.Catalog, name, owner string, ttl time.Duration) (*Lease, error) {
	cat = catalogs.Wrap(cat)
	ident, err := catalogs.ParseIdentifier(name)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range 4 {
		tbl, err := catalogs.LoadTable(ctx, cat, name)
		if err != nil {
			return nil, err
		}
		head := tbl.CurrentSnapshot()
		if head == nil {
			return nil, fmt.Errorf("lease %s: %w", name, ErrNoSnapshot)
		}
		l := &Lease{Table: name, Owner: owner, cat: cat, ident: ident, ttl: ttl}
		now := time.Now()
		if ref, ok := leaseRef(tbl); ok {
			holder, expires := leaseHolder(tbl)
			gone := holder != owner && holderGone(holder)
			if expires.After(now) && holder != owner && !gone {
				return nil, &LeaseError{Table: name, Owner: holder, Expires: expires}
			}
			l.HolderGone = gone && expires.After(now)
			// Lapsed: remove the stale tag, on the condition that it is
			// still the one we saw, so two runs cannot both take over.
			err := l.commit(ctx, tbl, []table.Requirement{table.AssertRefSnapshotID(LeaseRef, &ref.SnapshotID)},
				[]table.Update{table.NewRemoveSnapshotRefUpdate(LeaseRef)})
			if catalogs.IsRetryable(err) {
				lastErr = err
				continue
			}
			if err != nil {
				return nil, err
			}
			l.TookOverFrom = holder
			if tbl, err = catalogs.LoadTable(ctx, cat, name); err != nil {
				return nil, err
			}
			head = tbl.CurrentSnapshot()
		}
		l.Expires = time.Now().Add(ttl)
		l.snapshot = head.SnapshotID
		err = l.commit(ctx, tbl, []table.Requirement{table.AssertRefSnapshotID(LeaseRef, nil)}, []table.Update{
			table.NewSetSnapshotRefUpdate(LeaseRef, head.SnapshotID, table.TagRef, leaseRefMaxAgeMs, 0, 0),
			table.NewSetPropertiesUpdate(map[string]string{PropLeaseOwner: owner, PropLeaseExpiresMs: strconv.FormatInt(l.Expires.UnixMilli(), 10)}),
		})
		if catalogs.IsRetryable(err) {
			lastErr = err
			continue
		}
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	// Lost every race: report whoever holds it now.
	if tbl, err := catalogs.LoadTable(ctx, cat, name); err == nil {
		if _, ok := leaseRef(tbl); ok {
			holder, expires := leaseHolder(tbl)
			return nil, &LeaseError{Table: name, Owner: holder, Expires: expires}
		}
	}
	return nil, fmt.Errorf("lease %s: %w", name, lastErr)
}

// Renew checks that l is still held, moves its tag to the current head (so
// it pins nothing an expiry should free), extends it by its ttl and sets
// props (such as the last-run times) in the same commit.
func (l *Lease) Renew(ctx context.Context, props map[string]string) error {
	return catalogs.WithCommitRetry(ctx, 4, func(ctx context.Context) error {
		tbl, err := l.held(ctx)
		if err != nil {
			return err
		}
		expires := time.Now().Add(l.ttl)
		set := map[string]string{PropLeaseOwner: l.Owner, PropLeaseExpiresMs: strconv.FormatInt(expires.UnixMilli(), 10)}
		for k, v := range props {
			set[k] = v
		}
		head := tbl.CurrentSnapshot().SnapshotID
		err = l.commit(ctx, tbl, []table.Requirement{table.AssertRefSnapshotID(LeaseRef, &l.snapshot)}, []table.Update{
			table.NewSetSnapshotRefUpdate(LeaseRef, head, table.TagRef, leaseRefMaxAgeMs, 0, 0),
			table.NewSetPropertiesUpdate(set),
		})
		if err == nil {
			l.snapshot, l.Expires = head, expires
		}
		return err
	})
}

// Release removes the lease and sets props in the same commit. Releasing a
// lease that was lost is ErrLeaseLost; it changes nothing.
func (l *Lease) Release(ctx context.Context, props map[string]string) error {
	return catalogs.WithCommitRetry(ctx, 4, func(ctx context.Context) error {
		tbl, err := l.held(ctx)
		if err != nil {
			return err
		}
		updates := []table.Update{
			table.NewRemoveSnapshotRefUpdate(LeaseRef),
			table.NewRemovePropertiesUpdate([]string{PropLeaseOwner, PropLeaseExpiresMs}),
		}
		if len(props) > 0 {
			updates = append(updates, table.NewSetPropertiesUpdate(props))
		}
		return l.commit(ctx, tbl, []table.Requirement{table.AssertRefSnapshotID(LeaseRef, &l.snapshot)}, updates)
	})
}

// held reloads the table and checks that l still holds its lease.
func (l *Lease) held(ctx context.Context) (*table.Table, error) {
	tbl, err := catalogs.LoadTable(ctx, l.cat, l.Table)
	if err != nil {
		return nil, err
	}
	ref, ok := leaseRef(tbl)
	holder, _ := leaseHolder(tbl)
	if !ok || holder != l.Owner || ref.SnapshotID != l.snapshot {
		return nil, fmt.Errorf("%w on %s: now held by %q", ErrLeaseLost, l.Table, holder)
	}
	return tbl, nil
}

func (l *Lease) commit(ctx context.Context, tbl *table.Table, reqs []table.Requirement, updates []table.Update) error {
	reqs = append(reqs, table.AssertTableUUID(tbl.Metadata().TableUUID()))
	_, _, err := l.cat.CommitTable(ctx, l.ident, reqs, updates)
	if err != nil {
		return fmt.Errorf("lease %s: %w", l.Table, err)
	}
	return nil
}

func leaseRef(tbl *table.Table) (table.SnapshotRef, bool) {
	for name, ref := range tbl.Metadata().Refs() {
		if name == LeaseRef {
			return ref, true
		}
	}
	return table.SnapshotRef{}, false
}

// leaseHolder reads the holder and expiry properties; a missing or
// malformed expiry reads as already lapsed.
func leaseHolder(tbl *table.Table) (string, time.Time) {
	props := tbl.Properties()
	ms, err := strconv.ParseInt(props[PropLeaseExpiresMs], 10, 64)
	if err != nil {
		return props[PropLeaseOwner], time.Time{}
	}
	return props[PropLeaseOwner], time.UnixMilli(ms)
}

// propTime reads a Unix-milliseconds property; ok is false when it is
// missing or malformed.
func propTime(props map[string]string, key string) (time.Time, bool) {
	ms, err := strconv.ParseInt(props[key], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}
