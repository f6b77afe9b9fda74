package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/job"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// Work runs inside the test process, except in a child run as the CLI.
func init() { watchParent = os.Getenv(envAsCLI) == "1" }

// runCLIIn is runCLI with stdin.
func runCLIIn(t testing.TB, warehouse, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	ios := &ioStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	full := append([]string{"--warehouse", warehouse, "--config", noConfig(t)}, args...)
	code := run(t.Context(), full, ios)
	return cliResult{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// plannedJob is a table of two partitions (two groups) with a planned
// job: the job file's path, the job and its unit lines.
type plannedJob struct {
	wh, file string
	job      job.Rewrite
	units    []string
}

func planJob(t *testing.T) *plannedJob {
	t.Helper()
	wh := t.TempDir()
	r := runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "2000", "--commits", "6", "--partition-by", "bucket(2, id)")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, wh, false, "job", "plan", "--table", "geo.t", "--curve", "hilbert", "--option", "min-input-files=2")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	p := &plannedJob{wh: wh, file: filepath.Join(t.TempDir(), "job.json"), units: lines[1:]}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &p.job))
	require.Len(t, p.units, 2, "one unit per group")
	require.NoError(t, os.WriteFile(p.file, []byte(lines[0]+"\n"), 0o644))
	return p
}

// work runs units in one work process and returns its result lines.
func (p *plannedJob) work(t *testing.T, units ...string) []string {
	t.Helper()
	r := runCLIIn(t, p.wh, strings.Join(units, "\n")+"\n", "job", "work", "--job", p.file)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	return strings.Split(strings.TrimSpace(r.Stdout), "\n")
}

// tagged returns the files under the warehouse that carry the job's tag
// or are its record.
func (p *plannedJob) tagged(t *testing.T) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(p.wh, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.Contains(d.Name(), p.job.Tag()) || strings.Contains(d.Name(), p.job.ID)) {
			out = append(out, path)
		}
		return err
	}))
	return out
}

// liveFiles returns the paths of the table's data files and the summary
// of its current snapshot, and how many snapshots it has.
func (p *plannedJob) liveFiles(t *testing.T) (map[string]bool, map[string]string, int) {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: p.wh})
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	live := map[string]bool{}
	for _, task := range tasks {
		live[strings.TrimPrefix(task.File.FilePath(), "file://")] = true
	}
	return live, tbl.CurrentSnapshot().Summary.Properties, len(tbl.Metadata().Snapshots())
}

func resultFiles(t *testing.T, p *plannedJob, line string) []string {
	t.Helper()
	var res jobUnitResult
	require.NoError(t, json.Unmarshal([]byte(line), &res))
	files, err := job.DecodeFiles(res.Files)
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimPrefix(f.FilePath(), "file://"))
	}
	require.NotEmpty(t, out)
	return out
}

// TestJobPlanWorkCommit runs a rewrite as units in two work processes
// and commits it: one snapshot tagged with the job, the units' files are
// the table's, and nothing of the job but those files stays.
func TestJobPlanWorkCommit(t *testing.T) {
	t.Parallel()
	p := planJob(t)
	_, _, before := p.liveFiles(t)
	results := append(p.work(t, p.units[0]), p.work(t, p.units[1])...)
	require.Len(t, results, 2)
	var res jobUnitResult
	require.NoError(t, json.Unmarshal([]byte(results[0]), &res))
	require.Equal(t, os.Getpid(), res.PID)
	require.False(t, res.End.Before(res.Start))
	require.Positive(t, res.Rows)
	if runtime.GOOS == "linux" {
		require.Positive(t, res.PeakRSS, "work reports its peak resident set")
	}

	r := runCLIIn(t, p.wh, strings.Join(results, "\n"), "--json", "job", "commit", "--job", p.file)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var got struct {
		Verified bool  `json:"verified"`
		Added    int64 `json:"added_data_files_count"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &got), r.Stdout)
	require.True(t, got.Verified)
	live, summary, after := p.liveFiles(t)
	require.Equal(t, before+1, after, "one new snapshot")
	require.Equal(t, p.job.ID, summary[format.SummaryJobID])
	var written []string
	for _, l := range results {
		written = append(written, resultFiles(t, p, l)...)
	}
	require.Len(t, live, len(written))
	require.EqualValues(t, len(written), got.Added)
	for _, f := range written {
		require.True(t, live[f], "%s is not live", f)
	}
	require.ElementsMatch(t, written, p.tagged(t), "the job's record is gone, its files are the table's")
}

// TestJobCommitKeepsOneAttempt runs a unit twice, as an engine that
// retries it does: the commit keeps the attempt whose result it reads and
// deletes the other attempt's files.
func TestJobCommitKeepsOneAttempt(t *testing.T) {
	t.Parallel()
	p := planJob(t)
	first := p.work(t, p.units[0])
	second := p.work(t, p.units...)
	lost, kept := resultFiles(t, p, first[0]), resultFiles(t, p, second[0])
	require.NotEqual(t, lost, kept, "every attempt writes fresh files")

	r := runCLIIn(t, p.wh, strings.Join(second, "\n"), "job", "commit", "--job", p.file)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	live, _, _ := p.liveFiles(t)
	for _, f := range kept {
		require.True(t, live[f], "%s is not live", f)
	}
	for _, f := range lost {
		require.NoFileExists(t, f, "the lost attempt's file stays")
	}
}

// TestJobCommitConflict: a writer that replaces the planned files
// between plan and commit makes the commit exit 4, commit nothing and
// leave nothing of the job.
func TestJobCommitConflict(t *testing.T) {
	t.Parallel()
	p := planJob(t)
	results := p.work(t, p.units...)
	r := runCLI(t, p.wh, false, "rewrite", "--table", "geo.t", "--option", "rewrite-all")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	live, summary, before := p.liveFiles(t)

	r = runCLIIn(t, p.wh, strings.Join(results, "\n"), "job", "commit", "--job", p.file)
	require.Equal(t, exitConflict, r.Code, r.Stderr)
	live2, summary2, after := p.liveFiles(t)
	require.Equal(t, before, after, "nothing committed")
	require.Equal(t, live, live2)
	require.Equal(t, summary, summary2)
	require.Empty(t, p.tagged(t))
}

// TestJobBadInput: results that miss a group, or units and results of
// another job, are refused with the reason, commit nothing and (for
// commit) leave nothing of the job.
func TestJobBadInput(t *testing.T) {
	t.Parallel()
	p := planJob(t)
	results := p.work(t, p.units...)
	other := strings.Replace(p.units[0], p.job.ID, "0123456789abcdef", 1)
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  string
	}{
		{"work: a unit of another job", []string{"job", "work", "--job", p.file}, other, exitUsage, "unit of job 0123456789abcdef"},
		{"work: no such group", []string{"job", "work", "--job", p.file}, strings.Replace(p.units[0], `"group":0`, `"group":7`, 1), exitUsage, "has no group 7"},
		{"work: not a job file", []string{"job", "work", "--job", p.units[0]}, "", exitUsage, "--job"},
		{"id without a table", []string{"job", "abort", "--job", p.job.ID}, "", exitUsage, "--table"},
		{"commit: a missing group", []string{"job", "commit", "--job", p.file}, results[0], exitError, `"group":1} has no result`},
	}
	_, _, before := p.liveFiles(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLIIn(t, p.wh, tc.stdin, tc.args...)
			require.Equal(t, tc.code, r.Code, r.Stderr)
			require.Contains(t, r.Stderr, tc.want)
		})
	}
	_, _, after := p.liveFiles(t)
	require.Equal(t, before, after, "nothing committed")
	require.Empty(t, p.tagged(t), "the failed commit deleted the job")
}

// TestJobAbort deletes what the units wrote and the job's record, found
// by the job's id.
func TestJobAbort(t *testing.T) {
	t.Parallel()
	p := planJob(t)
	p.work(t, p.units...)
	require.NotEmpty(t, p.tagged(t))
	r := runCLI(t, p.wh, false, "job", "abort", "--job", p.job.ID, "--table", "geo.t")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	require.Empty(t, p.tagged(t))
}

// TestJobWorkExitsWithItsParent: a work process whose parent is killed
// (an executor an engine lost) exits instead of going on, even while it
// waits in the middle of a unit.
func TestJobWorkExitsWithItsParent(t *testing.T) {
	t.Parallel()
	p := planJob(t)
	pause := filepath.Join(t.TempDir(), "pause")
	units := filepath.Join(t.TempDir(), "units")
	require.NoError(t, os.WriteFile(units, []byte(strings.Join(p.units, "\n")+"\n"), 0o644))
	// sh starts work as its child (no exec) and waits.
	sh := exec.CommandContext(t.Context(), "sh", "-c", `"$0" "$@" < "$UNITS" & wait`,
		os.Args[0], "--warehouse", p.wh, "--config", noConfig(t), "job", "work", "--job", p.file)
	sh.Env = append(os.Environ(), envAsCLI+"=1", pauseAfterWriteEnv+"="+pause, "UNITS="+units)
	require.NoError(t, sh.Start())
	var pid int
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(pause)
		pid, _ = strconv.Atoi(string(b))
		return pid > 0
	}, 30*time.Second, 20*time.Millisecond, "work never paused after writing")
	require.NoError(t, sh.Process.Kill())
	sh.Wait()
	require.Eventually(t, func() bool { return !running(pid) }, 10*time.Second, 50*time.Millisecond,
		"work (pid %d) still runs after its parent died", pid)
}

// running reports whether the process pid exists and is not a zombie.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: alive as far as kill says
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// TestJobShuffledStages runs a group over the memory budget through the
// three stages of work processes that job next hands out, commits, and
// checks the table matches a local rewrite of its twin; next prints
// nothing once every unit has run, and a hostile unit or flag is refused.
func TestJobShuffledStages(t *testing.T) {
	t.Parallel()
	wh, twin := t.TempDir(), t.TempDir()
	for _, w := range []string{wh, twin} {
		r := runCLI(t, w, false, "generate", "--table", "geo.t", "--rows", "6000", "--commits", "6", "--distribution", "clustered")
		require.Equal(t, exitOK, r.Code, r.Stderr)
	}
	flags := []string{"--table", "geo.t", "--curve", "hilbert", "--option", "rewrite-all=true", "--option", "target-file-size-bytes=36000", "--option", "max-group-memory-bytes=262144"}
	r := runCLI(t, twin, false, append([]string{"rewrite"}, flags...)...)
	require.Equal(t, exitOK, r.Code, r.Stderr)

	r = runCLI(t, wh, false, append([]string{"job", "plan", "--shuffle", "sometimes"}, flags...)...)
	require.Equal(t, exitUsage, r.Code)
	require.Contains(t, r.Stderr, `shuffle "sometimes": want auto, always or never`)
	r = runCLI(t, wh, false, append([]string{"job", "plan", "--workers", "0"}, flags...)...)
	require.Equal(t, exitUsage, r.Code)
	require.Contains(t, r.Stderr, "--workers 0: want at least 1")

	r = runCLI(t, wh, false, append([]string{"job", "plan", "--workers", "2"}, flags...)...)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	p := &plannedJob{wh: wh, file: filepath.Join(t.TempDir(), "job.json"), units: lines[1:]}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &p.job))
	require.NoError(t, os.WriteFile(p.file, []byte(lines[0]+"\n"), 0o644))
	require.Equal(t, []int{0}, p.job.Shuffled)
	require.Contains(t, p.units[0], `"kind":"scatter"`)

	for _, tc := range []struct{ unit, want string }{
		{`{"job":"` + p.job.ID + `","kind":"gather"}`, `unknown kind of unit "gather"`},
		{`{"job":"` + p.job.ID + `"}`, "is shuffled: it has no whole-group unit"},
		{`{"job":"` + p.job.ID + `","kind":"span","inputs":["/etc/passwd"]}`, "not a shuffle file of job"},
	} {
		r := runCLIIn(t, wh, tc.unit+"\n", "job", "work", "--job", p.file)
		require.Equal(t, exitUsage, r.Code, tc.unit)
		require.Contains(t, r.Stderr, tc.want)
	}

	var results []string
	var stages []string
	for units := p.units; len(units) > 0; {
		var u job.Unit
		require.NoError(t, json.Unmarshal([]byte(units[0]), &u))
		stages = append(stages, u.Kind)
		// Two workers share each stage.
		half := (len(units) + 1) / 2
		results = append(results, p.work(t, units[:half]...)...)
		if half < len(units) {
			results = append(results, p.work(t, units[half:]...)...)
		}
		r := runCLIIn(t, wh, strings.Join(results, "\n"), "job", "next", "--job", p.file)
		require.Equal(t, exitOK, r.Code, r.Stderr)
		units = nil
		if out := strings.TrimSpace(r.Stdout); out != "" {
			units = strings.Split(out, "\n")
		}
	}
	require.Equal(t, []string{"scatter", "bucket", "span"}, stages)
	r = runCLIIn(t, wh, strings.Join(results, "\n"), "--json", "job", "commit", "--job", p.file)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	require.Contains(t, r.Stdout, `"verified": true`)
	require.Equal(t, tableFileRows(t, twin), tableFileRows(t, wh), "the files a local rewrite writes")
	for _, f := range p.tagged(t) {
		require.NotContains(t, f, "geocompact-shuffle", "no shuffle file stays")
	}
}

// tableFileRows returns the row counts of geo.t's data files, sorted.
func tableFileRows(t *testing.T, wh string) []int64 {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: wh})
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	var rows []int64
	for _, task := range tasks {
		rows = append(rows, task.File.Count())
	}
	slices.Sort(rows)
	return rows
}
