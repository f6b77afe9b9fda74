package maintain

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/maintain/posdeletes"
)

// MinRetention is the retention floor: expire and orphans refuse to act on
// anything younger unless forced, and a policy below it is refused. Readers
// mid-scan still open files of the snapshot they planned against, and a
// writer that has not committed yet owns files no metadata references; an
// hour covers both for any sane job.
const MinRetention = time.Hour

// Defaults of the maintenance commands, as Iceberg's procedures have them.
const (
	// DefaultExpireOlderThan is expire_snapshots' default age: 5 days.
	DefaultExpireOlderThan = 5 * 24 * time.Hour
	// DefaultRetainLast is expire_snapshots' default retain_last.
	DefaultRetainLast = 1
	// DefaultOrphansOlderThan is remove_orphan_files' default age: 3 days.
	DefaultOrphansOlderThan = 3 * 24 * time.Hour
)

// Sentinel errors of the maintenance operations.
var (
	// ErrPolicy marks a policy file that cannot be used.
	ErrPolicy = errors.New("maintain: bad policy")
	// ErrDuration marks a malformed duration or timestamp.
	ErrDuration = errors.New("maintain: bad duration")
	// ErrRetentionFloor marks an age below MinRetention given without force.
	ErrRetentionFloor = errors.New("maintain: below the retention floor")
)

// RetentionError reports an age below MinRetention. What is the operation
// ("expire", "orphans"); Age the age asked for.
type RetentionError struct {
	What string
	Age  time.Duration
}

// RemedyForce: force the operation if sure, below the retention floor.
var RemedyForce = remedy.Define("maintain.force", func(remedy.Advice) string { return "force it if you are sure" })

var _ remedy.Carrier = (*RetentionError)(nil)

func (e *RetentionError) Error() string { return e.Say(remedy.Library) }

// Remedy is to force it (RemedyForce).
func (e *RetentionError) Remedy() remedy.Advice { return remedy.Advice{Kind: RemedyForce} }

// Say returns the message with the remedy worded by w.
func (e *RetentionError) Say(w remedy.Wording) string {
	why := "readers mid-scan and time-travel consumers may still need the snapshots it would expire"
	if e.What == "orphans" {
		why = "a writer that has not committed yet may own files no metadata references"
	}
	return fmt.Sprintf("%s older than %s is below the %s retention floor: %s; %s",
		e.What, FormatDuration(e.Age), FormatDuration(MinRetention), why, w(e.Remedy()))
}

func (e *RetentionError) Unwrap() error { return ErrRetentionFloor }

// CheckRetention returns a *RetentionError when age is below MinRetention
// and force is not set.
func CheckRetention(what string, age time.Duration, force bool) error {
	if age < MinRetention && !force {
		return &RetentionError{What: what, Age: age}
	}
	return nil
}

// MaxDuration is the longest duration ParseDuration accepts: 100 years.
// A retention or age beyond it is a mistake, and a larger number of
// nanoseconds would not fit a time.Duration.
const MaxDuration = 36500 * 24 * time.Hour

// goDuration matches the text time.ParseDuration reads, without a sign:
// text it matches but refuses is over time.Duration's range. days matches
// the number of a duration in days.
var (
	goDuration = regexp.MustCompile(`^(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)
	days       = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)
)

// DurationError is a duration ParseDuration refuses. OutOfRange is set
// when it is well formed but negative or over MaxDuration.
type DurationError struct {
	Value, Reason string
	OutOfRange    bool
}

func (e *DurationError) Error() string {
	return fmt.Sprintf("%v: %q %s", ErrDuration, e.Value, e.Reason)
}

func (e *DurationError) Unwrap() error { return ErrDuration }

// ParseDuration parses a Go duration ("36h", "90m") or a number of days
// ("5d", "1.5d"), as retention settings are usually given in days. A
// negative duration, or one over MaxDuration, is a *DurationError saying
// so.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	want := &DurationError{Value: s, Reason: "is not a duration: want one such as 5d, 36h or 90m"}
	over := &DurationError{Value: s, Reason: "is over the maximum of " + FormatDuration(MaxDuration), OutOfRange: true}
	negative := &DurationError{Value: s, Reason: "is negative: want a duration such as 5d, 36h or 90m", OutOfRange: true}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if !days.MatchString(n) {
			return 0, want
		}
		f, _ := strconv.ParseFloat(n, 64) // well formed: at worst ±Inf
		switch {
		case strings.HasPrefix(n, "-") && f != 0:
			return 0, negative
		case f > float64(MaxDuration/(24*time.Hour)):
			return 0, over
		}
		return time.Duration(f * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	unsigned := s
	if s != "" && (s[0] == '+' || s[0] == '-') {
		unsigned = s[1:]
	}
	switch {
	case err != nil && !goDuration.MatchString(unsigned), s == "":
		return 0, want
	case strings.HasPrefix(s, "-") && (err != nil || d < 0):
		return 0, negative
	case err != nil || d > MaxDuration:
		return 0, over
	}
	return d, nil
}

// ParseAge parses a --older-than value: a duration (see ParseDuration),
// measured back from now, or an RFC 3339 timestamp (UTC unless it carries
// an offset; a date alone means its midnight UTC). It returns the age, now
// minus the instant; a timestamp in the future is an error.
func ParseAge(s string, now time.Time) (time.Duration, error) {
	d, derr := ParseDuration(s)
	if derr == nil {
		return d, nil
	}
	if de, ok := errors.AsType[*DurationError](derr); ok && de.OutOfRange {
		return 0, derr
	}
	s = strings.TrimSpace(s)
	var ts time.Time
	var err error
	layouts := []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"}
	for _, l := range layouts {
		if ts, err = time.ParseInLocation(l, s, time.UTC); err == nil {
			break
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %q: want a duration (5d, 36h) or an RFC 3339 timestamp (2026-01-02T15:04:05Z)", ErrDuration, s)
	}
	if ts.After(now) {
		return 0, fmt.Errorf("%w: %q is in the future", ErrDuration, s)
	}
	return now.Sub(ts), nil
}

// FormatDuration renders d the way ParseDuration reads it, in the largest
// whole unit: "5d", "36h", "90m", else as Go does ("1h30m15s").
func FormatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return d.String()
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// Duration is a time.Duration that reads and writes as ParseDuration's
// text in YAML ("5d", "36h").
type Duration time.Duration

// UnmarshalYAML parses a duration scalar.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes FormatDuration's text.
func (d Duration) MarshalYAML() (any, error) { return FormatDuration(time.Duration(d)), nil }

// Policy is what one maintain run does and when. Zero fields take the
// defaults of DefaultPolicy; docs/policy.md documents every field.
type Policy struct {
	Gate      GatePolicy      `yaml:"gate"`
	Rewrite   RewritePolicy   `yaml:"rewrite"`
	Deletes   DeletesPolicy   `yaml:"deletes"`
	Manifests ManifestsPolicy `yaml:"manifests"`
	Expire    ExpirePolicy    `yaml:"expire"`
	Orphans   OrphansPolicy   `yaml:"orphans"`
	Lease     LeasePolicy     `yaml:"lease"`
	Vacuum    VacuumPolicy    `yaml:"vacuum"`
}

// GatePolicy decides whether a run compacts. A partition (or the whole of
// an unpartitioned table) is fragmented when it holds at least two files
// and their average size is below MinAvgFileBytes, or when it holds more
// than MaxFilesPerPartition files.
type GatePolicy struct {
	// MinAvgFileBytes is the average file size floor (default 0: a
	// quarter of the rewrite's target file size, which is the policy's
	// target-file-size-bytes option, else the table's
	// write.target-file-size-bytes, else 512 MiB; negative turns it off).
	MinAvgFileBytes int64 `yaml:"min-avg-file-bytes"`
	// MaxFilesPerPartition is the per-partition file count ceiling
	// (default 1000; negative turns it off).
	MaxFilesPerPartition int64 `yaml:"max-files-per-partition"`
}

// RewritePolicy is the rewrite a run performs when the gate fires; its
// fields mean what engine.Request's fields of the same names mean.
type RewritePolicy struct {
	Strategy  string            `yaml:"strategy,omitempty"`
	Curve     string            `yaml:"curve,omitempty"`
	SortOrder string            `yaml:"sort-order,omitempty"`
	Where     string            `yaml:"where,omitempty"`
	Options   map[string]string `yaml:"options,omitempty"`
	// AllowLayoutChange lets a strategy, curve or sort order that differs
	// from the table's recorded layout rewrite it (default false: such a
	// run fails at the rewrite step, naming both layouts). Without
	// strategy, curve and sort order the rewrite follows the table's layout.
	AllowLayoutChange bool `yaml:"allow-layout-change,omitempty"`
}

// DeletesPolicy says when a run maintains an Iceberg table's delete files,
// and which cure it takes: compacting the position delete files (Iceberg's
// rewrite_position_delete_files; vectors on a v3 table), which is cheap, or
// rewriting the data files the deletes apply to, which drops them.
type DeletesPolicy struct {
	// MaxDeleteFiles: the position delete files are compacted when the
	// table holds more (default 10; negative never).
	MaxDeleteFiles int64 `yaml:"max-delete-files"`
	// RewriteDataAbove: when deletes hide more than this fraction of the
	// table's rows (default 0.2; negative never), the gate fires and the
	// rewrite applies them: it takes every data file with a delete
	// (delete-file-threshold=1, unless rewrite.options sets it).
	RewriteDataAbove float64 `yaml:"rewrite-data-above"`
	// Options are rewrite_position_delete_files' options, by Iceberg's
	// names.
	Options map[string]string `yaml:"options,omitempty"`
}

// GateRewriteDataAbove names the delete threshold in a GateDecision.
const GateRewriteDataAbove = "deletes.rewrite-data-above"

// ManifestsPolicy says when a run merges manifests.
type ManifestsPolicy struct {
	// MaxManifests: manifests are rewritten when the current snapshot has
	// more (default 100; negative never).
	MaxManifests int `yaml:"max-manifests"`
	// TargetSizeBytes is the merged manifests' size (default: the table's
	// commit.manifest.target-size-bytes, 8 MiB).
	TargetSizeBytes int64 `yaml:"target-size-bytes,omitempty"`
}

// ExpirePolicy says how often and how much a run expires.
type ExpirePolicy struct {
	// Enabled turns the step off when false (default true).
	Enabled *bool `yaml:"enabled"`
	// Every is the cadence: the step runs when the last expiry recorded on
	// the table is at least this old (default 24h; 0 every run).
	Every *Duration `yaml:"every"`
	// OlderThan is the snapshot age to expire (default 5d, floor 1h).
	OlderThan Duration `yaml:"older-than"`
	// RetainLast is how many snapshots of each branch are kept whatever
	// their age (default 1).
	RetainLast int `yaml:"retain-last"`
}

// OrphansPolicy says how often and how carefully a run removes orphans.
type OrphansPolicy struct {
	// Enabled turns the step off when false (default true).
	Enabled *bool `yaml:"enabled"`
	// Every is the cadence (default 7d; 0 every run).
	Every *Duration `yaml:"every"`
	// OlderThan: younger unreferenced files are kept (default 3d, floor 1h).
	OlderThan Duration `yaml:"older-than"`
}

// VacuumPolicy says how often and how carefully a run on a Delta table
// vacuums it (Run); Iceberg tables expire snapshots and remove
// orphans instead.
type VacuumPolicy struct {
	// Enabled turns the step off when false (default true).
	Enabled *bool `yaml:"enabled"`
	// Every is the cadence: the step runs when the last vacuum the
	// table's log records (a VACUUM END commit) is at least this old
	// (default 24h; 0 every run).
	Every *Duration `yaml:"every"`
	// Retain keeps files removed less than this long ago (default: the
	// table's delta.deletedFileRetentionDuration, 7 days unless set). It
	// may only be longer than the table's retention: a run asking for
	// less fails, as there is no force for a policy.
	Retain Duration `yaml:"retain,omitempty"`
}

// LeasePolicy configures the lease that keeps runs on one table apart.
type LeasePolicy struct {
	// TTL is how long a lease holds without renewal; a run that crashes
	// frees its table after at most TTL (default 2h).
	TTL Duration `yaml:"ttl"`
}

// DefaultPolicy returns the policy used without a policy file.
func DefaultPolicy() Policy {
	p := Policy{}
	p.fillDefaults()
	return p
}

func (p *Policy) fillDefaults() {
	if p.Gate.MaxFilesPerPartition == 0 {
		p.Gate.MaxFilesPerPartition = 1000
	}
	if p.Manifests.MaxManifests == 0 {
		p.Manifests.MaxManifests = 100
	}
	if p.Deletes.MaxDeleteFiles == 0 {
		p.Deletes.MaxDeleteFiles = 10
	}
	if p.Deletes.RewriteDataAbove == 0 {
		p.Deletes.RewriteDataAbove = 0.2
	}
	if p.Expire.Enabled == nil {
		p.Expire.Enabled = ptr(true)
	}
	if p.Expire.Every == nil {
		p.Expire.Every = ptr(Duration(24 * time.Hour))
	}
	if p.Expire.OlderThan == 0 {
		p.Expire.OlderThan = Duration(DefaultExpireOlderThan)
	}
	if p.Expire.RetainLast == 0 {
		p.Expire.RetainLast = DefaultRetainLast
	}
	if p.Orphans.Enabled == nil {
		p.Orphans.Enabled = ptr(true)
	}
	if p.Orphans.Every == nil {
		p.Orphans.Every = ptr(Duration(7 * 24 * time.Hour))
	}
	if p.Orphans.OlderThan == 0 {
		p.Orphans.OlderThan = Duration(DefaultOrphansOlderThan)
	}
	if p.Vacuum.Enabled == nil {
		p.Vacuum.Enabled = ptr(true)
	}
	if p.Vacuum.Every == nil {
		p.Vacuum.Every = ptr(Duration(24 * time.Hour))
	}
	if p.Lease.TTL == 0 {
		p.Lease.TTL = Duration(2 * time.Hour)
	}
}

func ptr[T any](v T) *T { return &v }

// Validate checks the policy's values, including the retention floor and
// the rewrite options (by Iceberg's names).
func (p Policy) Validate() error {
	switch {
	case p.Expire.RetainLast < 1:
		return fmt.Errorf("%w: expire.retain-last must be at least 1", ErrPolicy)
	case p.Lease.TTL < Duration(time.Minute):
		return fmt.Errorf("%w: lease.ttl %s is too short: a run must be able to finish within it", ErrPolicy, FormatDuration(time.Duration(p.Lease.TTL)))
	}
	if err := CheckRetention("expire", time.Duration(p.Expire.OlderThan), false); err != nil {
		return fmt.Errorf("%w: expire.older-than %s is below the %s retention floor: readers mid-scan and time-travel consumers may still need those snapshots",
			ErrPolicy, FormatDuration(time.Duration(p.Expire.OlderThan)), FormatDuration(MinRetention))
	}
	if err := CheckRetention("orphans", time.Duration(p.Orphans.OlderThan), false); err != nil {
		return fmt.Errorf("%w: orphans.older-than %s is below the %s retention floor: a younger file may belong to a writer that has not committed yet",
			ErrPolicy, FormatDuration(time.Duration(p.Orphans.OlderThan)), FormatDuration(MinRetention))
	}
	if p.Deletes.RewriteDataAbove > 1 {
		return fmt.Errorf("%w: deletes.rewrite-data-above %g: want a fraction of the rows, at most 1 (negative: never)", ErrPolicy, p.Deletes.RewriteDataAbove)
	}
	if _, err := posdeletes.ParseOptions(p.Deletes.Options, nil); err != nil {
		return fmt.Errorf("%w: deletes.options: %w", ErrPolicy, err)
	}
	if r := time.Duration(p.Vacuum.Retain); r != 0 && r < MinRetention {
		return fmt.Errorf("%w: vacuum.retain %s is below the %s retention floor: readers and writers may still need the files it would delete",
			ErrPolicy, FormatDuration(r), FormatDuration(MinRetention))
	}
	return p.checkRewrite()
}

// checkRewrite checks the rewrite section as the engine checks a request,
// naming the field at fault.
func (p Policy) checkRewrite() error {
	_, err := p.rewriteRequest().Check()
	re, ok := errors.AsType[*engine.RequestError](err)
	switch {
	case err == nil:
		return nil
	case !ok:
		return fmt.Errorf("%w: rewrite.options: %w", ErrPolicy, err)
	case re.Field == engine.FieldStrategy && re.Value != string(engine.BinPack):
		return fmt.Errorf("%w: rewrite.%w", ErrPolicy, re.Err)
	case re.Field == engine.FieldCurve:
		return fmt.Errorf("%w: rewrite.curve: %w", ErrPolicy, re.Err)
	case re.Field == engine.FieldSortOrder:
		return fmt.Errorf("%w: rewrite.sort-order: %w", ErrPolicy, re.Err)
	}
	return fmt.Errorf("%w: rewrite: %w", ErrPolicy, re.Err)
}

// ParsePolicy parses a policy document; name is used in messages. Unknown
// fields are errors that name the field. Missing fields take their
// defaults, and the result is validated.
func ParsePolicy(b []byte, name string) (Policy, error) {
	var p Policy
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return Policy{}, fmt.Errorf("%w: %s: %s", ErrPolicy, name, yamlMessage(err))
	}
	p.fillDefaults()
	if err := p.Validate(); err != nil {
		return Policy{}, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// policySections names the policy's sections by their Go types, for
// messages about unknown fields.
var policySections = map[string]string{
	"Policy": "the top level", "GatePolicy": "gate", "RewritePolicy": "rewrite", "DeletesPolicy": "deletes", "ManifestsPolicy": "manifests",
	"ExpirePolicy": "expire", "OrphansPolicy": "orphans", "LeasePolicy": "lease", "VacuumPolicy": "vacuum",
}

// policyFields lists the YAML keys of each policy section, by Go type
// name, for did-you-mean hints.
var policyFields = yamlKeys(reflect.TypeFor[Policy](), map[string][]string{})

// yamlKeys adds the YAML keys of struct type t and of the struct types
// of its fields to keys, by type name.
func yamlKeys(t reflect.Type, keys map[string][]string) map[string][]string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || keys[t.Name()] != nil {
		return keys
	}
	names := []string{}
	keys[t.Name()] = names
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "-" || !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = strings.ToLower(f.Name)
		}
		names = append(names, tag)
		yamlKeys(f.Type, keys)
	}
	keys[t.Name()] = names
	return keys
}

var unknownField = regexp.MustCompile(`field (\S+) not found in type maintain\.(\w+)`)

// yamlMessage rewrites the YAML decoder's messages in the policy's terms:
// "line 2: unknown field "min-avg-file-size" in gate".
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = unknownField.ReplaceAllStringFunc(m, func(s string) string {
			g := unknownField.FindStringSubmatch(s)
			sec := policySections[g[2]]
			if sec == "" {
				sec = g[2]
			}
			return fmt.Sprintf("unknown field %q in %s%s", g[1], sec, suggest.Hint(g[1], policyFields[g[2]]))
		})
	}
	return strings.Join(msgs, "; ")
}

// LoadPolicy reads and parses the policy file at path; an empty path gives
// DefaultPolicy.
func LoadPolicy(path string) (Policy, error) {
	if path == "" {
		return DefaultPolicy(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Policy{}, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	return ParsePolicy(b, path)
}

// YAML renders the policy as a policy file.
func (p Policy) YAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// rewriteRequest is the rewrite the policy asks for.
func (p Policy) rewriteRequest() engine.Request {
	return engine.Request{
		Strategy:  engine.Strategy(p.Rewrite.Strategy),
		Curve:     p.Rewrite.Curve,
		SortOrder: p.Rewrite.SortOrder,
		Where:     p.Rewrite.Where,
		Options:   p.Rewrite.Options,

		AllowLayoutChange: p.Rewrite.AllowLayoutChange,
	}
}
