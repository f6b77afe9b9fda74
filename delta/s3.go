package delta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/geocompact/geocompact/internal/scratch"
)

// S3Storage is Storage on an S3 bucket, or an S3-compatible object store,
// under a key prefix.
//
// PutIfAbsent is PutObject with If-None-Match: *, the conditional create S3
// has offered since 2024; a store that ignores the header cannot tell two
// writers of the same version apart, so it must not be written by more than
// one writer at a time.
type S3Storage struct {
	Client *s3.Client
	Bucket string
	// Prefix is the table's key prefix, without slashes at either end.
	Prefix string
}

var _ Storage = (*S3Storage)(nil)

// isS3Location says whether location names an S3 table (s3:// or s3a://).
func isS3Location(location string) bool {
	return strings.HasPrefix(location, "s3://") || strings.HasPrefix(location, "s3a://")
}

// NewS3Storage returns an S3Storage for a table at s3://bucket/prefix. The
// client takes its region, credentials and endpoint from the AWS SDK's usual
// sources: AWS_REGION, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or a
// profile, and AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) for an
// S3-compatible store, which is then addressed path-style.
func NewS3Storage(ctx context.Context, location string) (*S3Storage, error) {
	bucket, prefix, err := splitS3(location)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration for %s: %w", location, err)
	}
	custom := os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = custom })
	return &S3Storage{Client: client, Bucket: bucket, Prefix: prefix}, nil
}

// Open returns the Delta table at location: an s3:// (or s3a://) URI, a
// local directory or a file: URL.
func Open(ctx context.Context, location string) (*Table, error) {
	if isS3Location(location) {
		st, err := NewS3Storage(ctx, location)
		if err != nil {
			return nil, err
		}
		return &Table{Store: st}, nil
	}
	return OpenLocal(location)
}

func splitS3(location string) (bucket, key string, err error) {
	u, err := url.Parse(location)
	if err != nil || (u.Scheme != "s3" && u.Scheme != "s3a") || u.Host == "" {
		return "", "", fmt.Errorf("invalid S3 location %q, want s3://BUCKET/PREFIX", location)
	}
	return u.Host, strings.Trim(u.Path, "/"), nil
}

// TableRoot implements Storage.
func (s *S3Storage) TableRoot() Root { return Root{Bucket: s.Bucket, Dir: s.Prefix} }

// key maps a table-relative path, or an absolute s3:// URI in the same
// bucket, to an object key. Names are canonical (Root.Canonical): already
// decoded, so an absolute one is split, not parsed as a URL again.
func (s *S3Storage) key(name string) (string, error) {
	if isS3Location(name) {
		_, rest, _ := strings.Cut(name, "://")
		bucket, key, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return "", fmt.Errorf("invalid S3 location %q, want s3://BUCKET/KEY", name)
		}
		if bucket != s.Bucket {
			return "", fmt.Errorf("%s is in bucket %s, not the table's bucket %s", name, bucket, s.Bucket)
		}
		return key, nil
	}
	if strings.Contains(name, "://") || strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%s is not inside the table's S3 location s3://%s/%s", name, s.Bucket, s.Prefix)
	}
	rel := strings.TrimPrefix(path.Clean("/"+name), "/")
	if s.Prefix == "" {
		return rel, nil
	}
	if rel == "" {
		return s.Prefix, nil
	}
	return s.Prefix + "/" + rel, nil
}

// List implements Storage.
func (s *S3Storage) List(ctx context.Context, dir string, recursive bool) ([]FileInfo, error) {
	k, err := s.key(dir)
	if err != nil {
		return nil, err
	}
	prefix := k
	if prefix != "" {
		prefix += "/"
	}
	in := &s3.ListObjectsV2Input{Bucket: &s.Bucket, Prefix: &prefix}
	if !recursive {
		in.Delimiter = aws.String("/")
	}
	root := s.Prefix
	if root != "" {
		root += "/"
	}
	var out []FileInfo
	for p := s3.NewListObjectsV2Paginator(s.Client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", dir, err)
		}
		for _, o := range page.Contents {
			out = append(out, FileInfo{Path: strings.TrimPrefix(aws.ToString(o.Key), root),
				Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Open implements Storage.
func (s *S3Storage) Open(ctx context.Context, name string) (File, error) {
	k, err := s.key(name)
	if err != nil {
		return nil, err
	}
	head, err := s.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.Bucket, Key: &k})
	if err != nil {
		if isS3Status(err, "NotFound", "NoSuchKey") {
			err = fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		}
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return &s3File{ctx: ctx, s: s, key: k, size: aws.ToInt64(head.ContentLength)}, nil
}

// PutIfAbsent implements Storage with a conditional PutObject.
func (s *S3Storage) PutIfAbsent(ctx context.Context, name string, data []byte) error {
	k, err := s.key(name)
	if err != nil {
		return err
	}
	_, err = s.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.Bucket, Key: &k,
		Body: bytes.NewReader(data), IfNoneMatch: aws.String("*")})
	// 412: the object exists. 409: a concurrent conditional write of the
	// same key is in flight, which will win or has won.
	if isS3Status(err, "PreconditionFailed", "ConditionalRequestConflict") {
		return ErrExist
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", name, err)
	}
	return nil
}

// Put implements Storage; a PutObject replaces an object atomically.
func (s *S3Storage) Put(ctx context.Context, name string, data []byte) error {
	k, err := s.key(name)
	if err != nil {
		return err
	}
	if _, err := s.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.Bucket, Key: &k,
		Body: bytes.NewReader(data)}); err != nil {
		return fmt.Errorf("put %s: %w", name, err)
	}
	return nil
}

// stagePrefix starts the name of the local directory an object is staged
// in before its upload.
const stagePrefix = "geocompact-stage-"

// Create implements Storage: the object is staged in a local file and
// uploaded on Close, so a killed writer leaves nothing in the bucket. The
// file is in a private directory of the temporary directory, locked while
// the writer lives (see scratch.Dir): a killed writer's staging is
// removed by the next upload staged there.
func (s *S3Storage) Create(ctx context.Context, name string) (io.WriteCloser, error) {
	k, err := s.key(name)
	if err != nil {
		return nil, err
	}
	dir, _, err := scratch.Open(os.TempDir(), stagePrefix)
	if err != nil {
		return nil, fmt.Errorf("create %s: stage locally: %w", name, err)
	}
	f, err := os.Create(filepath.Join(dir.Path(), "object"))
	if err != nil {
		dir.Close()
		return nil, fmt.Errorf("create %s: stage locally: %w", name, err)
	}
	return &s3Upload{File: f, dir: dir, ctx: ctx, s: s, key: k, name: name}, nil
}

// Delete implements Storage.
func (s *S3Storage) Delete(ctx context.Context, name string) error {
	k, err := s.key(name)
	if err != nil {
		return err
	}
	if _, err := s.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.Bucket, Key: &k}); err != nil &&
		!isS3Status(err, "NotFound", "NoSuchKey") {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

func isS3Status(err error, codes ...string) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	for _, c := range codes {
		if ae.ErrorCode() == c {
			return true
		}
	}
	return false
}

type s3Upload struct {
	*os.File
	dir       *scratch.Dir // where File is staged
	ctx       context.Context
	s         *S3Storage
	key, name string
}

func (u *s3Upload) Close() error {
	defer u.dir.Close()
	_, err := u.File.Seek(0, io.SeekStart)
	if err == nil {
		_, err = u.s.Client.PutObject(u.ctx, &s3.PutObjectInput{Bucket: &u.s.Bucket, Key: &u.key, Body: u.File})
	}
	if cerr := u.File.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", u.name, err)
	}
	return nil
}

// s3File reads an object: ReadAt with ranged GETs (Parquet footers and row
// groups), Read with one streaming GET from the current offset (JSON).
type s3File struct {
	ctx  context.Context
	s    *S3Storage
	key  string
	size int64
	off  int64
	body io.ReadCloser
}

func (f *s3File) get(off, n int64) (io.ReadCloser, error) {
	rng := fmt.Sprintf("bytes=%d-", off)
	if n >= 0 {
		rng = fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	}
	out, err := f.s.Client.GetObject(f.ctx, &s3.GetObjectInput{Bucket: &f.s.Bucket, Key: &f.key, Range: &rng})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.key, err)
	}
	return out.Body, nil
}

func (f *s3File) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), f.size-off)
	body, err := f.get(off, n)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	got, err := io.ReadFull(body, p[:n])
	if err == nil && n < int64(len(p)) {
		err = io.EOF
	}
	return got, err
}

func (f *s3File) Read(p []byte) (int, error) {
	if f.off >= f.size {
		return 0, io.EOF
	}
	if f.body == nil {
		body, err := f.get(f.off, -1)
		if err != nil {
			return 0, err
		}
		f.body = body
	}
	n, err := f.body.Read(p)
	f.off += int64(n)
	if err == io.EOF && f.off < f.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (f *s3File) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = f.off + offset
	case io.SeekEnd:
		abs = f.size + offset
	default:
		return 0, fmt.Errorf("seek %s: invalid whence %d", f.key, whence)
	}
	if abs < 0 {
		return 0, fmt.Errorf("seek %s: negative position", f.key)
	}
	if abs != f.off && f.body != nil {
		f.body.Close()
		f.body = nil
	}
	f.off = abs
	return abs, nil
}

func (f *s3File) Close() error {
	if f.body != nil {
		return f.body.Close()
	}
	return nil
}
