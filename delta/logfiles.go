package delta

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
)

// LogDir is the directory of the transaction log under the table root.
const LogDir = "_delta_log"

// sidecarDir holds v2 checkpoint sidecar files.
const sidecarDir = LogDir + "/_sidecars"

const lastCheckpointName = LogDir + "/_last_checkpoint"

// CommitPath returns the log path of version v's commit file.
func CommitPath(v int64) string { return fmt.Sprintf("%s/%020d.json", LogDir, v) }

// checkpointFile is one file of a checkpoint.
type checkpointFile struct {
	Version int64
	Name    string // path relative to the table root
	Part    int    // 1-based part of a multi-part checkpoint, 0 otherwise
	Parts   int    // number of parts of a multi-part checkpoint, 0 otherwise
	UUID    string // set for a v2 UUID-named checkpoint
}

// checkpoint is a complete checkpoint: one file, or every part of a
// multi-part one.
type checkpoint struct {
	Version int64
	Files   []checkpointFile
}

var (
	commitRe    = regexp.MustCompile(`^(\d{20})\.json$`)
	classicRe   = regexp.MustCompile(`^(\d{20})\.checkpoint\.parquet$`)
	multipartRe = regexp.MustCompile(`^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$`)
	uuidCkptRe  = regexp.MustCompile(`^(\d{20})\.checkpoint\.([0-9a-fA-F-]{36})\.(json|parquet)$`)
)

// logListing is what a listing of _delta_log holds, by version.
type logListing struct {
	commits     map[int64]string
	checkpoints []checkpoint // complete ones, ascending by version
}

func listLog(ctx context.Context, st Storage) (*logListing, error) {
	files, err := st.List(ctx, LogDir, false)
	if err != nil {
		return nil, err
	}
	ll := &logListing{commits: map[int64]string{}}
	parts := map[[2]int64][]checkpointFile{} // (version, parts) -> files
	var singles []checkpoint
	for _, f := range files {
		base := path.Base(f.Path)
		if m := commitRe.FindStringSubmatch(base); m != nil {
			ll.commits[atoi64(m[1])] = f.Path
			continue
		}
		if m := classicRe.FindStringSubmatch(base); m != nil {
			v := atoi64(m[1])
			singles = append(singles, checkpoint{Version: v, Files: []checkpointFile{{Version: v, Name: f.Path}}})
			continue
		}
		if m := uuidCkptRe.FindStringSubmatch(base); m != nil {
			v := atoi64(m[1])
			singles = append(singles, checkpoint{Version: v, Files: []checkpointFile{{Version: v, Name: f.Path, UUID: m[2]}}})
			continue
		}
		if m := multipartRe.FindStringSubmatch(base); m != nil {
			v, part, n := atoi64(m[1]), int(atoi64(m[2])), int(atoi64(m[3]))
			key := [2]int64{v, int64(n)}
			parts[key] = append(parts[key], checkpointFile{Version: v, Name: f.Path, Part: part, Parts: n})
		}
	}
	ll.checkpoints = append(ll.checkpoints, singles...)
	for key, fs := range parts {
		if c, ok := completeMultipart(key[0], int(key[1]), fs); ok {
			ll.checkpoints = append(ll.checkpoints, c)
		}
	}
	sort.SliceStable(ll.checkpoints, func(i, j int) bool { return ll.checkpoints[i].Version < ll.checkpoints[j].Version })
	return ll, nil
}

func completeMultipart(v int64, n int, fs []checkpointFile) (checkpoint, bool) {
	byPart := map[int]checkpointFile{}
	for _, f := range fs {
		byPart[f.Part] = f
	}
	if n < 1 || len(byPart) != n {
		return checkpoint{}, false
	}
	c := checkpoint{Version: v}
	for p := 1; p <= n; p++ {
		f, ok := byPart[p]
		if !ok {
			return checkpoint{}, false
		}
		c.Files = append(c.Files, f)
	}
	return c, true
}

func atoi64(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

func (ll *logListing) latestCommit() (int64, bool) {
	latest, ok := int64(-1), false
	for v := range ll.commits {
		if v > latest {
			latest, ok = v, true
		}
	}
	return latest, ok
}

// LastCheckpoint is the _last_checkpoint hint.
type LastCheckpoint struct {
	Version       int64           `json:"version"`
	Size          int64           `json:"size"`
	Parts         *int            `json:"parts,omitempty"`
	SizeInBytes   *int64          `json:"sizeInBytes,omitempty"`
	NumOfAddFiles *int64          `json:"numOfAddFiles,omitempty"`
	V2Checkpoint  json.RawMessage `json:"v2Checkpoint,omitempty"`
	Checksum      string          `json:"checksum,omitempty"`
}

// readLastCheckpoint returns the hint, or nil when it is missing or corrupt:
// the hint only saves work, and listing the log is always correct.
func readLastCheckpoint(ctx context.Context, st Storage) *LastCheckpoint {
	b, err := readAll(ctx, st, lastCheckpointName)
	if err != nil {
		return nil
	}
	var lc LastCheckpoint
	if err := json.Unmarshal(b, &lc); err != nil || lc.Version < 0 {
		return nil
	}
	return &lc
}
