package primemock_test

// Evidence that the mock speaks the SDK's wire contract, from the SDK's own
// schema: testdata/sdk_command_session.binpb is the FileDescriptorProto of
// command_session/command_session.proto serialized in prime-sandboxes'
// generated command_session_pb2.py.

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func sdkFileDescriptor(t *testing.T) *descriptorpb.FileDescriptorProto {
	t.Helper()
	raw, err := os.ReadFile("testdata/sdk_command_session.binpb")
	if err != nil {
		t.Fatal(err)
	}
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(raw, &fdp); err != nil {
		t.Fatal(err)
	}
	return &fdp
}

// normalised drops what may differ without changing the wire contract:
//   - the go_package option;
//   - the other language options buf's managed mode writes into our
//     generated descriptor (java_*, objc_class_prefix, csharp_namespace,
//     php_*, ruby_package), which the SDK's descriptor does not have;
//   - json_name where it is the default derived from the field name
//     (protoc records it for plugins; Python's serialized descriptor leaves
//     it out), so a custom json_name would still show;
//   - the order of top-level messages.
func normalised(fdp *descriptorpb.FileDescriptorProto) *descriptorpb.FileDescriptorProto {
	c := proto.CloneOf(fdp)
	if o := c.Options; o != nil {
		o.GoPackage, o.JavaPackage, o.JavaOuterClassname, o.JavaMultipleFiles = nil, nil, nil, nil
		o.ObjcClassPrefix, o.CsharpNamespace, o.PhpNamespace, o.PhpMetadataNamespace, o.RubyPackage = nil, nil, nil, nil, nil
		if proto.Size(o) == 0 {
			c.Options = nil
		}
	}
	var strip func(ms []*descriptorpb.DescriptorProto)
	strip = func(ms []*descriptorpb.DescriptorProto) {
		for _, m := range ms {
			for _, f := range m.Field {
				if f.GetJsonName() == defaultJSONName(f.GetName()) {
					f.JsonName = nil
				}
			}
			strip(m.NestedType)
		}
	}
	strip(c.MessageType)
	slices.SortFunc(c.MessageType, func(a, b *descriptorpb.DescriptorProto) int { return strings.Compare(a.GetName(), b.GetName()) })
	return c
}

// defaultJSONName is protoc's lowerCamelCase of a field name.
func defaultJSONName(name string) string {
	var b strings.Builder
	upper := false
	for _, r := range name {
		switch {
		case r == '_':
			upper = true
		case upper:
			b.WriteString(strings.ToUpper(string(r)))
			upper = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestProtoMatchesSDKDescriptor: our .proto is the SDK's schema, field for
// field (names, numbers, types, labels, oneofs, proto3 optionals, enums,
// service and streaming flags).
func TestProtoMatchesSDKDescriptor(t *testing.T) {
	sdk := normalised(sdkFileDescriptor(t))
	ours := normalised(protodesc.ToFileDescriptorProto(commandsessionpb.File_command_session_command_session_proto))
	if len(sdk.MessageType) < 10 || len(sdk.Service) != 1 {
		t.Fatalf("the SDK descriptor looks truncated: %d messages, %d services", len(sdk.MessageType), len(sdk.Service))
	}
	if !proto.Equal(sdk, ours) {
		t.Errorf("our descriptor differs from the SDK's\nSDK:\n%s\nours:\n%s", prototext.Format(sdk), prototext.Format(ours))
	}
}

// sdkClient is an independent Connect client built only from the SDK's
// descriptor, with dynamic messages: it shares no generated code with the
// mock.
type sdkClient struct {
	t     *testing.T
	file  protoreflect.FileDescriptor
	svc   protoreflect.ServiceDescriptor
	http  *http.Client
	base  string
	token string
}

func newSDKClient(t *testing.T, h *harness, id string) *sdkClient {
	t.Helper()
	fd, err := protodesc.NewFile(sdkFileDescriptor(t), new(protoregistry.Files))
	if err != nil {
		t.Fatal(err)
	}
	a := h.req("POST", "/api/v1/sandbox/"+id+"/auth", nil).must(t, 200).body
	// The SDK: base_url = gateway_url.rstrip("/") + "/" + user_ns + "/" + job_id.
	base := strings.TrimRight(a["gateway_url"].(string), "/") + "/" + a["user_ns"].(string) + "/" + a["job_id"].(string)
	return &sdkClient{t: t, file: fd, svc: fd.Services().ByName("CommandSession"), http: h.ts.Client(), base: base, token: a["token"].(string)}
}

func (c *sdkClient) method(name string) protoreflect.MethodDescriptor {
	m := c.svc.Methods().ByName(protoreflect.Name(name))
	if m == nil {
		c.t.Fatalf("the SDK's service has no %s", name)
	}
	return m
}

func (c *sdkClient) client(m protoreflect.MethodDescriptor) *connect.Client[dynamicpb.Message, dynamicpb.Message] {
	return connect.NewClient[dynamicpb.Message, dynamicpb.Message](c.http,
		c.base+"/"+string(c.svc.FullName())+"/"+string(m.Name()),
		connect.WithSchema(m),
		connect.WithResponseInitializer(func(spec connect.Spec, msg any) error {
			*msg.(*dynamicpb.Message) = *dynamicpb.NewMessage(spec.Schema.(protoreflect.MethodDescriptor).Output())
			return nil
		}))
}

// startRequest builds what rpc_command_session.build_command_session_start_request
// builds: CommandSpec{cmd "/bin/bash", args ["-c", command], envs env or {},
// cwd only when a working dir is given}, stdin explicitly false.
func (c *sdkClient) startRequest(command string, env map[string]string, workingDir *string) *dynamicpb.Message {
	m := c.method("Start")
	req := dynamicpb.NewMessage(m.Input())
	specField := m.Input().Fields().ByName("command")
	spec := dynamicpb.NewMessage(specField.Message())
	sf := specField.Message().Fields()
	spec.Set(sf.ByName("cmd"), protoreflect.ValueOfString("/bin/bash"))
	args := spec.Mutable(sf.ByName("args")).List()
	args.Append(protoreflect.ValueOfString("-c"))
	args.Append(protoreflect.ValueOfString(command))
	envs := spec.Mutable(sf.ByName("envs")).Map()
	for k, v := range env {
		envs.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString(v))
	}
	if workingDir != nil {
		spec.Set(sf.ByName("cwd"), protoreflect.ValueOfString(*workingDir))
	}
	req.Set(specField, protoreflect.ValueOfMessage(spec))
	req.Set(m.Input().Fields().ByName("stdin"), protoreflect.ValueOfBool(false))
	return req
}

// sdkResult is what _execute_command_connect_rpc makes of a stream.
type sdkResult struct {
	stdout, stderr string
	exitCode       *int64
	err            error
}

// execute mirrors the SDK: collect stdout (and pty) and stderr from data
// events, take the exit code of the last end event, and fail a stream that
// ends without one.
func (c *sdkClient) execute(command string, env map[string]string, workingDir *string, timeout time.Duration, token string) sdkResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req := connect.NewRequest(c.startRequest(command, env, workingDir))
	if token != "" {
		req.Header().Set("Authorization", "Bearer "+token)
	}
	var res sdkResult
	stream, err := c.client(c.method("Start")).CallServerStream(ctx, req)
	if err != nil {
		res.err = err
		return res
	}
	defer stream.Close()
	for stream.Receive() {
		msg := stream.Msg()
		evField := msg.Descriptor().Fields().ByName("event")
		if !msg.Has(evField) {
			continue
		}
		ev := msg.Get(evField).Message()
		which := ev.WhichOneof(ev.Descriptor().Oneofs().ByName("event"))
		if which == nil {
			continue
		}
		inner := ev.Get(which).Message()
		switch which.Name() {
		case "data":
			out := inner.WhichOneof(inner.Descriptor().Oneofs().ByName("output"))
			if out == nil {
				continue
			}
			b := string(inner.Get(out).Bytes())
			if out.Name() == "stderr" {
				res.stderr += b
			} else {
				res.stdout += b
			}
		case "end":
			code := inner.Get(inner.Descriptor().Fields().ByName("exit_code")).Int()
			res.exitCode = &code
		}
	}
	res.err = stream.Err()
	if res.err == nil && res.exitCode == nil {
		res.err = connect.NewError(connect.CodeUnknown, errStreamWithoutExit)
	}
	return res
}

type stringError string

func (e stringError) Error() string { return string(e) }

const errStreamWithoutExit = stringError("Command stream ended without exit code")

func TestSDKDescriptorClient(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: 5 * time.Millisecond})
	id := h.ready(map[string]any{"environment_vars": map[string]string{"SANDBOX_VAR": "from-sandbox"}})
	c := newSDKClient(t, h, id)

	wd := "/usr/local"
	for _, tc := range []struct {
		name           string
		command        string
		env            map[string]string
		workingDir     *string
		stdout, stderr string
		exit           int64
	}{
		{"stdout", "echo 'sandbox ready'", nil, nil, "sandbox ready\n", "", 0},
		{"stderr and exit code", "echo out; echo err >&2; exit 7", nil, nil, "out\n", "err\n", 7},
		{"env", `echo "$KEY ${OTHER}" $SANDBOX_VAR; printenv KEY`, map[string]string{"KEY": "value", "OTHER": "x y"}, nil, "value x y from-sandbox\nvalue\n", "", 0},
		{"working dir", "pwd && cd .. && pwd", nil, &wd, "/usr/local\n/usr\n", "", 0},
		{"unknown command", "nosuch-tool --version", nil, nil, "", "bash: line 1: nosuch-tool: command not found\n" + mockLacks("nosuch-tool"), 127},
	} {
		res := c.execute(tc.command, tc.env, tc.workingDir, 30*time.Second, c.token)
		if res.err != nil || res.exitCode == nil {
			t.Errorf("%s: %v", tc.name, res.err)
			continue
		}
		if res.stdout != tc.stdout || res.stderr != tc.stderr || *res.exitCode != tc.exit {
			t.Errorf("%s: stdout %q stderr %q exit %d; want %q %q %d", tc.name, res.stdout, res.stderr, *res.exitCode, tc.stdout, tc.stderr, tc.exit)
		}
	}

	// A missing token is unauthenticated, before any event: the SDK then
	// drops its cached token and retries once.
	if res := c.execute("echo", nil, nil, 30*time.Second, ""); connect.CodeOf(res.err) != connect.CodeUnauthenticated {
		t.Errorf("no token: %v, want unauthenticated", res.err)
	}
	// The SDK's deadline is Connect-Timeout-Ms = the command timeout; a
	// command that outlives it ends the stream with deadline_exceeded.
	if res := c.execute("sleep 30", nil, nil, 200*time.Millisecond, c.token); connect.CodeOf(res.err) != connect.CodeDeadlineExceeded {
		t.Errorf("past the deadline: %v, want deadline_exceeded", res.err)
	}

	// List and SendSignal through the SDK's schema as well.
	procs, err := c.client(c.method("List")).CallUnary(context.Background(), c.authed(dynamicpb.NewMessage(c.method("List").Input())))
	if err != nil {
		t.Fatal(err)
	}
	sessions := procs.Msg.Get(procs.Msg.Descriptor().Fields().ByName("sessions")).List()
	if sessions.Len() != 1 {
		t.Fatalf("List: %d sessions, want the sleeping one", sessions.Len())
	}
	pid := sessions.Get(0).Message().Get(c.method("List").Output().Fields().ByName("sessions").Message().Fields().ByName("pid")).Uint()
	sig := dynamicpb.NewMessage(c.method("SendSignal").Input())
	sf := sig.Descriptor().Fields()
	sel := dynamicpb.NewMessage(sf.ByName("session").Message())
	sel.Set(sel.Descriptor().Fields().ByName("pid"), protoreflect.ValueOfUint32(uint32(pid)))
	sig.Set(sf.ByName("session"), protoreflect.ValueOfMessage(sel))
	sig.Set(sf.ByName("signal"), protoreflect.ValueOfEnum(c.file.Enums().ByName("Signal").Values().ByName("SIGNAL_SIGKILL").Number()))
	if _, err := c.client(c.method("SendSignal")).CallUnary(context.Background(), c.authed(sig)); err != nil {
		t.Fatal(err)
	}
	if e := h.waitFor("the kill", func(e primemock.Event) bool {
		return e.Type == primemock.EventCommandExecuted && e.Command == "sleep 30"
	}); e.ExitCode != 137 || e.Signal != "SIGKILL" {
		t.Errorf("after SIGKILL: %+v", e)
	}
}

func (c *sdkClient) authed(m *dynamicpb.Message) *connect.Request[dynamicpb.Message] {
	r := connect.NewRequest(m)
	r.Header().Set("Authorization", "Bearer "+c.token)
	return r
}
