package prime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	pb "github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb/commandsessionpbconnect"
)

// fakeGateway is a small stand-in for the platform, under the test's full
// control: the REST endpoints the gateway client needs (GET /sandbox/{id},
// create, list, /auth, /error-context, status:batchGet), the gateway's file
// routes and the Connect command-session service.
type fakeGateway struct {
	commandsessionpbconnect.UnimplementedCommandSessionHandler
	t   testing.TB
	srv *httptest.Server

	mu        sync.Mutex
	sandboxes map[string]*fakeSandbox
	counts    map[string]int // by route: "get", "create", "list", "auth", "error-context", "batch", "Start", "SendSignal", "List"
	order     []string       // command-session calls in order: "Start", "List", "SIGTERM 42", ...
	tokens    []string       // tokens issued, in order
	revoked   map[string]bool
	used      []string      // tokens presented to the gateway, in order
	commands  []fakeCommand // every Start, as a command
	starts    []*pb.StartRequest
	startHdrs []http.Header // HTTP headers of each Start call
	startPath []string
	listed    map[uint32]bool // pids List reports

	tokenTTL   time.Duration
	gatewayURL string // when set, /auth answers this instead of the fake's own address

	// Behaviour, set by tests before use. onStart answers a Start in full;
	// else onCommand, when set, answers it as a command: its exit code and
	// output, or an error (a *connect.Error) that ends the stream after the
	// start event; else the command prints "ok" and exits 0.
	onStart   func(ctx context.Context, n int, req *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error
	onCommand func(n int, cmd fakeCommand) (exit int, stdout, stderr string, err error)
	onSignal  func(pid uint32, sig pb.Signal) error // nil: succeed
	// termStops: a SIGTERM removes the pid from List's answer.
	termStops         bool
	listUnimplemented bool
	// refuseAll: the gateway refuses every token.
	refuseAll bool
	// onAuth, when set, runs when POST /auth arrives, before it is answered.
	onAuth func()

	// File routes (upload, download, read-file): every request in order,
	// and a hook that may answer in the fake's place (handled true).
	fileReqs []fakeFileReq
	onFile   func(n int, route string, w http.ResponseWriter, r *http.Request) (handled bool)
	// onJobBatch answers the background-jobs status:batchGet (nil: 404).
	onJobBatch func(n int, req BatchJobStatusRequest) (status int, answer any)
}

// fakeFileReq is one request to a file route.
type fakeFileReq struct {
	route, path, sandboxID string
	query                  url.Values
	name                   string // the upload's multipart file name
}

// fakeCommand is a Start as a command: the script of /bin/bash -c, its
// environment and directory, and the stream's deadline (Connect-Timeout-Ms).
type fakeCommand struct {
	Command    string
	Env        map[string]string
	WorkingDir *string
	Timeout    time.Duration
}

type fakeSandbox struct {
	status  string
	errType string
	errMsg  string
	// statuses, when set, are the status:batchGet answers by poll (the last
	// one repeats); status is then what GET and error-context say.
	statuses []SandboxStatus
	polls    int
	// onPoll, when set, runs after each status:batchGet answer is decided.
	onPoll func()
	// files is the sandbox's file system as the file routes see it; an
	// upload larger than fakeKeptFile keeps only its size and digest.
	files map[string]*fakeFile
}

type fakeFile struct {
	data   []byte
	size   int64
	sha256 string
}

const fakeKeptFile = 8 << 20

func newFakeGateway(t testing.TB) *fakeGateway {
	t.Helper()
	g := &fakeGateway{
		t: t, sandboxes: map[string]*fakeSandbox{}, counts: map[string]int{}, revoked: map[string]bool{},
		listed: map[uint32]bool{}, tokenTTL: time.Hour,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/sandbox", g.create)
	mux.HandleFunc("GET /api/v1/sandbox", g.list)
	mux.HandleFunc("GET /api/v1/sandbox/{id}", g.get)
	mux.HandleFunc("POST /api/v1/sandbox/{id}/auth", g.auth)
	mux.HandleFunc("GET /api/v1/sandbox/{id}/error-context", g.errorContext)
	mux.HandleFunc("POST /api/v1/sandbox/status:batchGet", g.batch)
	mux.HandleFunc("POST /gw/{ns}/{id}/upload", g.upload)
	mux.HandleFunc("GET /gw/{ns}/{id}/download", g.download)
	mux.HandleFunc("GET /gw/{ns}/{id}/read-file", g.readFile)
	mux.HandleFunc("POST /api/v1/sandbox/background-jobs/status:batchGet", g.jobBatch)
	_, connectHandler := commandsessionpbconnect.NewCommandSessionHandler(g)
	mux.HandleFunc("/gw/{ns}/{id}/command_session.CommandSession/{method}", func(w http.ResponseWriter, r *http.Request) {
		prefix := "/gw/" + r.PathValue("ns") + "/" + r.PathValue("id")
		if r.PathValue("method") == "Start" {
			g.mu.Lock()
			g.startHdrs = append(g.startHdrs, r.Header.Clone())
			g.startPath = append(g.startPath, r.URL.Path)
			g.mu.Unlock()
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
		connectHandler.ServeHTTP(w, r2)
	})
	g.srv = httptest.NewServer(mux)
	t.Cleanup(g.srv.Close)
	return g
}

// client returns a client on the fake with fast retries and a short stop
// grace (long enough for a List call on a loaded machine), and its debug log.
func (g *fakeGateway) client(mod func(*Options)) (*Client, *logRecorder) {
	rec := &logRecorder{}
	o := Options{
		Config: Config{APIKey: "sk-test-secret-key", BaseURL: g.srv.URL}, Retry: fastRetry, Log: rec.log,
		CommandStopGrace: 500 * time.Millisecond,
	}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		g.t.Fatal(err)
	}
	return c, rec
}

func (g *fakeGateway) add(id string, sb *fakeSandbox) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if sb.status == "" {
		sb.status = StatusRunning
	}
	g.sandboxes[id] = sb
}

func (g *fakeGateway) setStatus(id, status, errType, errMsg string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	sb := g.sandboxes[id]
	sb.status, sb.errType, sb.errMsg = status, errType, errMsg
}

func (g *fakeGateway) count(route string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.counts[route]
}

func (g *fakeGateway) calls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.order...)
}

func (g *fakeGateway) revoke(token string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.revoked[token] = true
}

func (g *fakeGateway) hit(route string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.counts[route]
	g.counts[route]++
	return n
}

func (g *fakeGateway) sandboxJSON(id string, sb *fakeSandbox) map[string]any {
	m := sandboxJSON(id)
	m["vm"], m["status"] = true, sb.status
	return m
}

func (g *fakeGateway) lookup(w http.ResponseWriter, r *http.Request) (string, *fakeSandbox, bool) {
	id := r.PathValue("id")
	g.mu.Lock()
	sb := g.sandboxes[id]
	g.mu.Unlock()
	if sb == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Sandbox not found"})
		return id, nil, false
	}
	return id, sb, true
}

func (g *fakeGateway) create(w http.ResponseWriter, r *http.Request) {
	g.hit("create")
	g.mu.Lock()
	id := fmt.Sprintf("sbx-%d", len(g.sandboxes)+1)
	sb := &fakeSandbox{status: StatusRunning}
	g.sandboxes[id] = sb
	g.mu.Unlock()
	writeJSON(w, 200, g.sandboxJSON(id, sb))
}

func (g *fakeGateway) list(w http.ResponseWriter, r *http.Request) {
	g.hit("list")
	g.mu.Lock()
	out := []map[string]any{}
	for id, sb := range g.sandboxes {
		out = append(out, g.sandboxJSON(id, sb))
	}
	g.mu.Unlock()
	writeJSON(w, 200, map[string]any{"sandboxes": out, "total": len(out), "page": 1, "perPage": 100, "hasNext": false})
}

func (g *fakeGateway) get(w http.ResponseWriter, r *http.Request) {
	g.hit("get")
	if id, sb, ok := g.lookup(w, r); ok {
		g.mu.Lock()
		m := g.sandboxJSON(id, sb)
		g.mu.Unlock()
		writeJSON(w, 200, m)
	}
}

func (g *fakeGateway) auth(w http.ResponseWriter, r *http.Request) {
	g.hit("auth")
	if g.onAuth != nil {
		g.onAuth()
	}
	id, _, ok := g.lookup(w, r)
	if !ok {
		return
	}
	g.mu.Lock()
	tok := fmt.Sprintf("gw-token-%04d", len(g.tokens)+1)
	g.tokens = append(g.tokens, tok)
	gw := g.gatewayURL
	if gw == "" {
		gw = g.srv.URL + "/gw/"
	}
	ttl := g.tokenTTL
	g.mu.Unlock()
	// A zone-less expiry, as Python's isoformat writes a naive UTC time.
	writeJSON(w, 200, map[string]any{
		"gateway_url": gw, "token": tok, "user_ns": "ns", "job_id": id,
		"expires_at": time.Now().UTC().Add(ttl).Format("2006-01-02T15:04:05.000000"),
	})
}

func (g *fakeGateway) errorContext(w http.ResponseWriter, r *http.Request) {
	g.hit("error-context")
	if _, sb, ok := g.lookup(w, r); ok {
		g.mu.Lock()
		m := map[string]any{"status": sb.status, "errorType": nil, "errorMessage": nil}
		if sb.errType != "" {
			m["errorType"] = sb.errType
		}
		if sb.errMsg != "" {
			m["errorMessage"] = sb.errMsg
		}
		g.mu.Unlock()
		writeJSON(w, 200, m)
	}
}

func (g *fakeGateway) batch(w http.ResponseWriter, r *http.Request) {
	g.hit("batch")
	var req BatchStatusRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	resp := BatchStatusResponse{Statuses: []SandboxStatus{}, Errors: []SandboxStatusError{}}
	var hooks []func()
	g.mu.Lock()
	for _, id := range req.SandboxIDs {
		sb := g.sandboxes[id]
		if sb != nil && sb.onPoll != nil {
			hooks = append(hooks, sb.onPoll)
		}
		switch {
		case sb == nil:
			resp.Errors = append(resp.Errors, SandboxStatusError{SandboxID: id, Code: BatchCodeNotFound, Message: "Sandbox not found"})
		case len(sb.statuses) > 0:
			st := sb.statuses[min(sb.polls, len(sb.statuses)-1)]
			sb.polls++
			st.SandboxID = id
			resp.Statuses = append(resp.Statuses, st)
		default:
			st := SandboxStatus{SandboxID: id, Status: sb.status}
			if sb.errType != "" {
				st.ErrorType = &sb.errType
			}
			resp.Statuses = append(resp.Statuses, st)
		}
	}
	g.mu.Unlock()
	for _, h := range hooks {
		h()
	}
	writeJSON(w, 200, resp)
}

// authorized records the token a gateway call presented and reports
// whether the fake accepts it.
func (g *fakeGateway) authorized(h http.Header) bool {
	tok := strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
	g.mu.Lock()
	defer g.mu.Unlock()
	g.used = append(g.used, tok)
	known := false
	for _, t := range g.tokens {
		known = known || t == tok
	}
	return known && !g.revoked[tok] && !g.refuseAll
}

func (g *fakeGateway) Start(ctx context.Context, req *connect.Request[pb.StartRequest], stream *connect.ServerStream[pb.StartResponse]) error {
	n := g.hit("Start")
	cmd := fakeCommand{Env: req.Msg.GetCommand().GetEnvs(), WorkingDir: req.Msg.GetCommand().Cwd}
	if args := req.Msg.GetCommand().GetArgs(); len(args) == 2 && args[0] == "-c" {
		cmd.Command = args[1]
	}
	if ms, err := strconv.Atoi(req.Header().Get("Connect-Timeout-Ms")); err == nil {
		cmd.Timeout = time.Duration(ms) * time.Millisecond
	}
	g.mu.Lock()
	g.starts = append(g.starts, req.Msg)
	g.commands = append(g.commands, cmd)
	g.order = append(g.order, "Start")
	g.mu.Unlock()
	if !g.authorized(req.Header()) {
		return connect.NewError(connect.CodeUnauthenticated, fmt.Errorf("invalid token"))
	}
	send := func(ev *pb.CommandSessionEvent) error { return stream.Send(&pb.StartResponse{Event: ev}) }
	if g.onStart != nil {
		return g.onStart(ctx, n, req.Msg, send)
	}
	exit, stdout, stderr, err := 0, "ok\n", "", error(nil)
	if g.onCommand != nil {
		exit, stdout, stderr, err = g.onCommand(n, cmd)
	}
	if serr := send(evStart(uint32(100 + n))); serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	evs := []*pb.CommandSessionEvent{}
	if stdout != "" {
		evs = append(evs, evStdout(stdout))
	}
	if stderr != "" {
		evs = append(evs, evStderr(stderr))
	}
	return sendAll(send, append(evs, evEnd(int32(exit)))...)
}

func (g *fakeGateway) SendSignal(_ context.Context, req *connect.Request[pb.SendSignalRequest]) (*connect.Response[pb.SendSignalResponse], error) {
	g.hit("SendSignal")
	pid, sig := req.Msg.GetSession().GetPid(), req.Msg.GetSignal()
	name := strings.TrimPrefix(sig.String(), "SIGNAL_")
	g.mu.Lock()
	g.order = append(g.order, fmt.Sprintf("%s %d", name, pid))
	if sig == pb.Signal_SIGNAL_SIGTERM && g.termStops {
		delete(g.listed, pid)
	}
	onSignal := g.onSignal
	g.mu.Unlock()
	if !g.authorized(req.Header()) {
		return nil, connect.NewError(connect.CodeUnauthenticated, fmt.Errorf("invalid token"))
	}
	if onSignal != nil {
		if err := onSignal(pid, sig); err != nil {
			return nil, err
		}
	}
	return connect.NewResponse(&pb.SendSignalResponse{}), nil
}

func (g *fakeGateway) List(_ context.Context, req *connect.Request[pb.ListRequest]) (*connect.Response[pb.ListResponse], error) {
	g.hit("List")
	g.mu.Lock()
	g.order = append(g.order, "List")
	unimplemented := g.listUnimplemented
	resp := &pb.ListResponse{}
	for pid := range g.listed {
		resp.Sessions = append(resp.Sessions, &pb.CommandSessionInfo{Pid: pid})
	}
	g.mu.Unlock()
	if unimplemented {
		return nil, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("List is not implemented"))
	}
	if !g.authorized(req.Header()) {
		return nil, connect.NewError(connect.CodeUnauthenticated, fmt.Errorf("invalid token"))
	}
	return connect.NewResponse(resp), nil
}

func evStart(pid uint32) *pb.CommandSessionEvent {
	return &pb.CommandSessionEvent{Event: &pb.CommandSessionEvent_Start{Start: &pb.CommandSessionEvent_StartEvent{Pid: pid}}}
}

func evStdout(s string) *pb.CommandSessionEvent {
	return &pb.CommandSessionEvent{Event: &pb.CommandSessionEvent_Data{Data: &pb.CommandSessionEvent_DataEvent{
		Output: &pb.CommandSessionEvent_DataEvent_Stdout{Stdout: []byte(s)}}}}
}

func evStderr(s string) *pb.CommandSessionEvent {
	return &pb.CommandSessionEvent{Event: &pb.CommandSessionEvent_Data{Data: &pb.CommandSessionEvent_DataEvent{
		Output: &pb.CommandSessionEvent_DataEvent_Stderr{Stderr: []byte(s)}}}}
}

func evPty(s string) *pb.CommandSessionEvent {
	return &pb.CommandSessionEvent{Event: &pb.CommandSessionEvent_Data{Data: &pb.CommandSessionEvent_DataEvent{
		Output: &pb.CommandSessionEvent_DataEvent_Pty{Pty: []byte(s)}}}}
}

func evEnd(code int32) *pb.CommandSessionEvent {
	return &pb.CommandSessionEvent{Event: &pb.CommandSessionEvent_End{End: &pb.CommandSessionEvent_EndEvent{ExitCode: code, Exited: true, Status: "exit"}}}
}

func evKeepalive() *pb.CommandSessionEvent {
	return &pb.CommandSessionEvent{Event: &pb.CommandSessionEvent_Keepalive{Keepalive: &pb.CommandSessionEvent_KeepAlive{}}}
}

// sendAll sends events, stopping at the first error.
func sendAll(send func(*pb.CommandSessionEvent) error, evs ...*pb.CommandSessionEvent) error {
	for _, ev := range evs {
		if err := send(ev); err != nil {
			return err
		}
	}
	return nil
}

// putFile stores a file in a sandbox's fake file system.
func (g *fakeGateway) putFile(id, path string, data []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	sb := g.sandboxes[id]
	if sb.files == nil {
		sb.files = map[string]*fakeFile{}
	}
	sum := sha256.Sum256(data)
	sb.files[path] = &fakeFile{data: data, size: int64(len(data)), sha256: hex.EncodeToString(sum[:])}
}

func (g *fakeGateway) file(id, path string) *fakeFile {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sandboxes[id].files[path] // the gateway's job_id is the sandbox id here
}

func (g *fakeGateway) fileRequests() []fakeFileReq {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]fakeFileReq(nil), g.fileReqs...)
}

// fileRoute records a file request, checks its token, and lets the test's
// hook answer; it reports whether the fake should still answer.
func (g *fakeGateway) fileRoute(route string, w http.ResponseWriter, r *http.Request, name string) bool {
	n := g.hit(route)
	q := r.URL.Query()
	g.mu.Lock()
	g.fileReqs = append(g.fileReqs, fakeFileReq{route: route, path: q.Get("path"), sandboxID: q.Get("sandbox_id"), query: q, name: name})
	g.mu.Unlock()
	if !g.authorized(r.Header) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "unauthorized", "message": "invalid token"})
		return false
	}
	if g.onFile != nil && g.onFile(n, route, w, r) {
		return false
	}
	return true
}

func (g *fakeGateway) upload(w http.ResponseWriter, r *http.Request) {
	mr, err := r.MultipartReader()
	if err != nil {
		g.fileRoute("upload", w, r, "")
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "bad_request", "message": err.Error()})
		return
	}
	part, err := mr.NextPart()
	if err != nil || part.FormName() != "file" {
		g.fileRoute("upload", w, r, "")
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "bad_request", "message": "no file field"})
		return
	}
	if !g.fileRoute("upload", w, r, part.FileName()) {
		return
	}
	h := sha256.New()
	var kept []byte
	buf := make([]byte, 64<<10)
	var size int64
	for {
		k, rerr := part.Read(buf)
		h.Write(buf[:k])
		if size+int64(k) <= fakeKeptFile {
			kept = append(kept, buf[:k]...)
		}
		size += int64(k)
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return // the client went away
		}
	}
	if size > fakeKeptFile {
		kept = nil
	}
	path := r.URL.Query().Get("path")
	g.mu.Lock()
	sb := g.sandboxes[r.PathValue("id")]
	if sb.files == nil {
		sb.files = map[string]*fakeFile{}
	}
	sb.files[path] = &fakeFile{data: kept, size: size, sha256: hex.EncodeToString(h.Sum(nil))}
	g.mu.Unlock()
	writeJSON(w, 200, map[string]any{"success": true, "path": path, "size": size, "timestamp": time.Now().UTC().Format(time.RFC3339)})
}

func (g *fakeGateway) download(w http.ResponseWriter, r *http.Request) {
	if !g.fileRoute("download", w, r, "") {
		return
	}
	f := g.file(r.PathValue("id"), r.URL.Query().Get("path"))
	if f == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "not_found", "message": "File not found"})
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(f.data)))
	_, _ = w.Write(f.data)
}

func (g *fakeGateway) readFile(w http.ResponseWriter, r *http.Request) {
	if !g.fileRoute("read-file", w, r, "") {
		return
	}
	f := g.file(r.PathValue("id"), r.URL.Query().Get("path"))
	if f == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "not_found", "message": "File not found"})
		return
	}
	writeJSON(w, 200, map[string]any{"content": string(f.data), "size": len(f.data)})
}

func (g *fakeGateway) jobBatch(w http.ResponseWriter, r *http.Request) {
	n := g.hit("job-batch")
	var req BatchJobStatusRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	if g.onJobBatch == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
		return
	}
	status, answer := g.onJobBatch(n, req)
	writeJSON(w, status, answer)
}
