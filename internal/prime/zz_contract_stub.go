package prime

// TEMPORARY: the file/job API contract, stubbed so the provider side can be
// written against it while the real implementation lands. Removed at merge.

import (
	"context"
	"errors"
	"io"
	"time"
)

var errStub = errors.New("stub")

type UploadSource struct {
	Name string
	Size int64
	Open func() (io.ReadCloser, error)
}
type UploadResult struct {
	Path string
	Size int64
}

func (c *Client) UploadFile(ctx context.Context, sandboxID, remotePath string, src UploadSource) (*UploadResult, error) {
	return nil, errStub
}
func (c *Client) DownloadFile(ctx context.Context, sandboxID, remotePath string, sink func(body io.Reader) error) error {
	return errStub
}

type ReadFileRequest struct {
	Path           string
	Offset, Length *int64
	Timeout        time.Duration
}
type ReadFileResult struct {
	Content           string
	Size              int64
	TotalSize, Offset *int64
	Truncated         bool
}

func (c *Client) ReadFile(ctx context.Context, sandboxID string, req ReadFileRequest) (*ReadFileResult, error) {
	return nil, errStub
}

var ErrFileNotFound = errors.New("file not found")
var ErrFileTooLarge = errors.New("file too large")

type PutFileRequest struct {
	Path    string
	Source  UploadSource
	Mode    *uint32
	Extract bool
}

func (c *Client) PutFile(ctx context.Context, sandboxID string, req PutFileRequest) (*UploadResult, error) {
	return nil, errStub
}
func (c *Client) RemovePath(ctx context.Context, sandboxID, path string, recursive bool) error {
	return errStub
}
func (c *Client) FetchDirectory(ctx context.Context, sandboxID, remoteDir string, sink func(tarStream io.Reader) error) error {
	return errStub
}

func WriteDirTar(w io.Writer, dir string) (int64, error) { return 0, errStub }

type ExtractLimits struct {
	MaxBytes   int64
	MaxEntries int
}
type ExtractedFile struct {
	Name   string
	Size   int64
	SHA256 string
}
type RefusedEntry struct{ Name, Reason string }
type ExtractResult struct {
	Files   []ExtractedFile
	Refused []RefusedEntry
}

func ExtractTar(r io.Reader, dest string, lim ExtractLimits) (*ExtractResult, error) {
	return nil, errStub
}

type Job struct{ SandboxID, ID string }

func (j Job) StdoutPath() string { return "/tmp/job_" + j.ID + ".stdout.log" }
func (j Job) StderrPath() string { return "/tmp/job_" + j.ID + ".stderr.log" }
func (j Job) ExitPath() string   { return "/tmp/job_" + j.ID + ".exit" }
func (j Job) PGIDPath() string   { return "/tmp/job_" + j.ID + ".pgid" }

type JobRequest struct {
	Command, WorkingDir string
	Env, SensitiveEnv   map[string]string
}

func NewJobID() string { return NewIdempotencyKey()[:8] }
func (c *Client) StartJob(ctx context.Context, job Job, req JobRequest) error {
	return errStub
}
func (c *Client) JobExists(ctx context.Context, job Job) (bool, error) { return false, errStub }

type JobState struct {
	Completed bool
	ExitCode  int
}

func (c *Client) WaitJob(ctx context.Context, job Job) (JobState, error) { return JobState{}, errStub }
func (c *Client) JobOutput(ctx context.Context, job Job, max int) (stdout, stderr string, stdoutCut, stderrCut bool, err error) {
	return "", "", false, false, errStub
}

type StopResult struct {
	Signal        string
	AlreadyExited bool
}

func (c *Client) StopJob(ctx context.Context, job Job, grace time.Duration) (*StopResult, error) {
	return nil, errStub
}

func (c *Client) ChangeMode(ctx context.Context, sandboxID, path string, mode uint32) error {
	return errStub
}

var ErrArchiveTooLarge = errors.New("archive larger than its limit")
