package delta

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/reliability"
)

// envStageChild makes TestS3StagingWriterChild stage an object and wait
// to be killed.
const envStageChild = "GEOCOMPACT_TEST_S3_STAGE_CHILD"

// unreachableS3 is S3 storage whose every request fails at once: the
// endpoint is a closed loopback port and nothing is retried.
func unreachableS3() *S3Storage {
	client := s3.New(s3.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String("http://127.0.0.1:1"),
		UsePathStyle:     true,
		RetryMaxAttempts: 1,
		Credentials:      aws.AnonymousCredentials{},
	})
	return &S3Storage{Client: client, Bucket: "bucket", Prefix: "tbl"}
}

// staged lists what S3 uploads left in dir.
func staged(t *testing.T, dir string) []string {
	t.Helper()
	left, err := reliability.LocalLeftovers(dir)
	require.NoError(t, err)
	return left
}

// TestS3StagingWriterChild is the writer TestS3StagingOfKilledWriterIsRemoved
// kills: it stages 1 MiB of an object and waits.
func TestS3StagingWriterChild(t *testing.T) {
	if os.Getenv(envStageChild) == "" {
		t.Skip("run by TestS3StagingOfKilledWriterIsRemoved")
	}
	w, err := unreachableS3().Create(context.Background(), "part-00000.parquet")
	require.NoError(t, err)
	_, err = w.Write(make([]byte, 1<<20))
	require.NoError(t, err)
	os.Stdout.WriteString("staged\n")
	select {}
}

// TestS3StagingOfKilledWriterIsRemoved: a writer killed (SIGKILL) while it
// stages an object for S3 leaves its local staging behind; the next
// upload staged under the same temporary directory removes it, and an
// upload that fails removes its own.
func TestS3StagingOfKilledWriterIsRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	child := exec.Command(os.Args[0], "-test.run=^TestS3StagingWriterChild$")
	child.Env = append(os.Environ(), envStageChild+"=1")
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the child did not stage its object")
	require.Equal(t, "staged\n", line)
	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	go io.Copy(io.Discard, out)
	left := staged(t, tmp)
	require.Len(t, left, 1, "the killed writer's staging is there to be found")

	st := unreachableS3()
	w, err := st.Create(t.Context(), "part-00001.parquet")
	require.NoError(t, err)
	now := staged(t, tmp)
	assert.NotContains(t, now, left[0], "the killed writer's staging is removed by the next upload")
	assert.Len(t, now, 1, "only the live upload's staging remains")

	_, err = w.Write([]byte("PAR1"))
	require.NoError(t, err)
	require.Error(t, w.Close(), "the upload to a closed port fails")
	assert.Empty(t, staged(t, tmp), "a failed upload removes its staging")
	assert.NoFileExists(t, filepath.Join(tmp, left[0]))
}
