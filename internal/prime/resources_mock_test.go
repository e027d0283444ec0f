package prime_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func resourceMock(t *testing.T, mod func(*primemock.Options)) (*prime.Client, *primemock.Server) {
	t.Helper()
	o := primemock.Options{
		APIKey: "k", BootDelay: 20 * time.Millisecond, ApplyDelay: 10 * time.Millisecond, GatewayLag: 5 * time.Millisecond,
		ResourceOptions: primemock.ResourceOptions{
			CheckpointFreezeDelay: 20 * time.Millisecond, CheckpointDurableDelay: 40 * time.Millisecond,
			RestoreDelay: 20 * time.Millisecond, PauseDelay: 20 * time.Millisecond, ResumeDelay: 20 * time.Millisecond,
			VMBuildDelay: 40 * time.Millisecond,
		},
	}
	if mod != nil {
		mod(&o)
	}
	m := primemock.New(o)
	srv := httptest.NewServer(m)
	t.Cleanup(func() { srv.Close(); m.Close() })
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return c, m
}

func deadline(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Setup once, fan out, through the typed client: the setup runs once in a
// template; 20 members restored from its checkpoint each have the setup's
// files, and each is locked before its agent runs (the mock's event log).
func TestSetupOnceFanOutAgainstMock(t *testing.T) {
	const members = 20
	c, m := resourceMock(t, nil)
	ctx := deadline(t)
	tmpl, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "template", DockerImage: "python:3.12-slim"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForReady(ctx, tmpl.ID, prime.WaitReadyOptions{Gateway: true}); err != nil {
		t.Fatal(err)
	}
	const setup = "mkdir -p /opt/task && echo ran >> /opt/task/setup.log"
	if res, err := c.Exec(ctx, tmpl.ID, prime.ExecRequest{Command: setup}); err != nil || res.ExitCode != 0 {
		t.Fatalf("setup: %+v %v", res, err)
	}
	ck, err := c.CreateCheckpoint(ctx, tmpl.ID, prime.CreateCheckpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	durable, err := c.WaitForCheckpoint(ctx, ck.ID, prime.WaitCheckpointOptions{})
	if err != nil || durable.State != prime.CheckpointDurable {
		t.Fatalf("checkpoint: %+v %v", durable, err)
	}
	if err := c.DeleteSandbox(ctx, tmpl.ID); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, members)
	ids := make([]string, members)
	for i := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("member-%d", i), CheckpointID: &ck.ID})
				if err != nil {
					return err
				}
				ids[i] = sb.ID
				if err := c.WaitForReady(ctx, sb.ID, prime.WaitReadyOptions{Gateway: true}); err != nil {
					return err
				}
				st, err := c.PutEgressPolicy(ctx, sb.ID, prime.EgressPolicy{Allowlist: []string{}})
				if err != nil {
					return err
				}
				if _, err := c.WaitForEgressApplied(ctx, sb.ID, st.Generation, st); err != nil {
					return err
				}
				res, err := c.Exec(ctx, sb.ID, prime.ExecRequest{Command: "cat /opt/task/setup.log && echo agent"})
				if err != nil {
					return err
				}
				if res.Stdout != "ran\nagent\n" {
					return fmt.Errorf("member %s: %q, want the setup's file", sb.ID, res.Stdout)
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	setups, applied, agentAt := 0, map[string]int64{}, map[string]int64{}
	for _, e := range m.Events() {
		switch {
		case e.Type == primemock.EventCommandExecuted && e.Command == setup:
			setups++
		case e.Type == primemock.EventPolicyApplied:
			applied[e.SandboxID] = e.Seq
		case e.Type == primemock.EventCommandStarted && strings.Contains(e.Command, "echo agent"):
			agentAt[e.SandboxID] = e.Seq
		}
	}
	if setups != 1 {
		t.Fatalf("the setup ran %d times, want once", setups)
	}
	st := m.Stats()
	total := 0
	for route, n := range st.Requests {
		total += n
		t.Logf("%5d  %s", n, route)
	}
	t.Logf("%d API requests for one template and %d members: %.1f per member", total, members, float64(total)/members)
	for _, id := range ids {
		if applied[id] == 0 || agentAt[id] == 0 || applied[id] > agentAt[id] {
			t.Fatalf("member %s: policy applied at %d, agent at %d; want the lock first", id, applied[id], agentAt[id])
		}
	}
	for _, id := range ids {
		if err := c.DeleteSandbox(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeleteCheckpoint(ctx, ck.ID); err != nil {
		t.Fatal(err)
	}
	if left, err := c.ListCheckpoints(ctx, prime.ListCheckpointsOptions{}); err != nil || len(left) != 0 {
		t.Fatalf("checkpoints left: %v %v", left, err)
	}
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Fatalf("%d sandboxes left", live)
	}
}

// A checkpoint lost with its sandbox, and one that fails, end the wait
// with a typed error; pause and resume wait for their status; a resume at
// the limit is a *ResumeRefusedError.
func TestCheckpointLossAndPauseAgainstMock(t *testing.T) {
	c, m := resourceMock(t, func(o *primemock.Options) { o.CheckpointDurableDelay = time.Hour })
	ctx := deadline(t)
	sb, _ := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "s", DockerImage: "img"})
	if err := c.WaitForRunning(ctx, sb.ID, prime.WaitRunningOptions{}); err != nil {
		t.Fatal(err)
	}
	ck, err := c.CreateCheckpoint(ctx, sb.ID, prime.CreateCheckpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 1)
	go func() { _, err := c.WaitForCheckpoint(ctx, ck.ID, prime.WaitCheckpointOptions{}); lost <- err }()
	if _, err := m.WaitForEvent(ctx, func(e primemock.Event) bool {
		return e.Type == primemock.EventCheckpointState && e.CheckpointID == ck.ID
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	var failed *prime.CheckpointFailedError
	if err := <-lost; !errors.As(err, &failed) || !failed.Gone {
		t.Fatalf("a checkpoint lost with its sandbox: %v", err)
	}

	m.Configure(func(o *primemock.Options) { o.CheckpointDurableDelay = 20 * time.Millisecond; o.CheckpointFailRate = 1 })
	sb, _ = c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "s", DockerImage: "img"})
	_ = c.WaitForRunning(ctx, sb.ID, prime.WaitRunningOptions{})
	ck, _ = c.CreateCheckpoint(ctx, sb.ID, prime.CreateCheckpointOptions{})
	if _, err := c.WaitForCheckpoint(ctx, ck.ID, prime.WaitCheckpointOptions{}); !errors.As(err, &failed) || failed.State != prime.CheckpointFailed {
		t.Fatalf("a failing checkpoint: %v", err)
	}

	if err := c.PauseAndWait(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.GetSandbox(ctx, sb.ID); got.Status != prime.StatusPaused {
		t.Fatalf("status %s", got.Status)
	}
	m.Configure(func(o *primemock.Options) { o.ResumeLimit = 1 })
	other, _ := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "o", DockerImage: "img"})
	var refused *prime.ResumeRefusedError
	if err := c.ResumeAndWait(ctx, sb.ID); !errors.As(err, &refused) || !errors.Is(err, prime.ErrResumeRefused) {
		t.Fatalf("resume at the limit: %v", err)
	}
	_ = c.DeleteSandbox(ctx, other.ID)
	if err := c.ResumeAndWait(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
}

// Networks, volumes, image builds and SSH sessions round-trip through the
// typed client, 204s included.
func TestNetworkVolumeImageSSHAgainstMock(t *testing.T) {
	c, m := resourceMock(t, func(o *primemock.Options) { o.ImagesWithoutVM = []string{"me/tools:2"} })
	ctx := deadline(t)

	if _, err := c.CreateVolume(ctx, prime.CreateVolumeRequest{Name: "data", SizeGB: 5}); err != nil {
		t.Fatal(err)
	}
	mount := prime.VolumeMount{Name: "data", MountPath: "/data"}
	a, _ := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "a", DockerImage: "img", Volumes: []prime.VolumeMount{mount}})
	b, _ := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "b", DockerImage: "img"})
	for _, id := range []string{a.ID, b.ID} {
		if err := c.WaitForReady(ctx, id, prime.WaitReadyOptions{Gateway: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec(ctx, a.ID, prime.ExecRequest{Command: "echo v1 > /data/model"}); err != nil {
		t.Fatal(err)
	}
	pub, err := c.PublishVolume(ctx, a.ID, "data")
	if err != nil {
		t.Fatal(err)
	}
	if done, err := c.WaitForVolumePublish(ctx, pub.ID, nil); err != nil || done.Merge == nil || *done.Merge == prime.MergePending {
		t.Fatalf("publish: %+v %v", done, err)
	}
	if v, err := c.GetVolume(ctx, "data", ""); err != nil || v.HeadCheckpointID == nil || *v.HeadCheckpointID != pub.ID {
		t.Fatalf("volume: %+v %v", v, err)
	}
	size := 8
	if v, err := c.UpdateVolume(ctx, "data", prime.UpdateVolumeRequest{SizeGB: &size}, ""); err != nil || v.SizeGB != 8 {
		t.Fatalf("grow: %+v %v", v, err)
	}

	n, err := c.CreateNetwork(ctx, prime.CreateNetworkRequest{Name: "eval"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PutNetworkMember(ctx, n.ID, a.ID, []string{"agent"}); err != nil {
		t.Fatal(err)
	}
	if err := c.PutNetworkMember(ctx, n.ID, b.ID, []string{"tools"}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := m.PeerReachable(a.ID, b.ID, 8080); ok {
		t.Fatal("the client's explicit empty rules let a member in")
	}
	if err := c.ReplaceNetworkRules(ctx, n.ID, []prime.NetworkRule{{From: "tag:agent", To: "tag:tools", Ports: []int{8080}}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Exec(ctx, a.ID, prime.ExecRequest{Command: "curl http://" + prime.MemberHost(b.ID) + ":8080/"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("agent → tools: %+v %v", res, err)
	}
	if got, _ := c.GetNetwork(ctx, n.ID); len(got.Members) != 2 || !prime.RuleAllows(got.Rules, []string{"agent"}, []string{"tools"}, 8080) {
		t.Fatalf("network %+v", got)
	}
	if err := c.RemoveNetworkMember(ctx, n.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteNetwork(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetNetwork(ctx, n.ID); !errors.Is(err, prime.ErrNotFound) {
		t.Fatalf("deleted network: %v", err)
	}

	if _, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "t", DockerImage: "me/tools:2"}); err == nil || !strings.Contains(err.Error(), "VM image not found") {
		t.Fatalf("create without a VM artifact: %v", err)
	}
	items, err := c.ListImages(ctx, prime.ListImagesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := prime.VMArtifact(items, "tools", "2"); ok {
		t.Fatal("a VM artifact before the build")
	}
	build, err := c.RequestVMBuild(ctx, "tools", "2", prime.VMBuildRequest{})
	if err != nil {
		t.Fatal(err)
	}
	fast := prime.Backoff{Initial: 10 * time.Millisecond, Factor: 1.5, Max: 50 * time.Millisecond}
	if done, err := c.WaitForImageBuild(ctx, build.BuildID, prime.WaitImageBuildOptions{Schedule: fast}); err != nil || done.Status != prime.ImageBuildCompleted {
		t.Fatalf("build: %+v %v", done, err)
	}
	if _, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "t", DockerImage: "me/tools:2"}); err != nil {
		t.Fatal(err)
	}

	s, err := c.CreateSSHSession(ctx, a.ID, prime.CreateSSHSessionRequest{PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 me"})
	if err != nil || s.Port == 0 || s.ExpiresAt.IsZero() {
		t.Fatalf("ssh: %+v %v", s, err)
	}
	if err := c.CloseSSHSession(ctx, a.ID, s.SessionID); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseSSHSession(ctx, a.ID, s.SessionID); !errors.Is(err, prime.ErrNotFound) {
		t.Fatalf("second close: %v", err)
	}
	if err := c.DeleteVolume(ctx, "data", ""); err != nil {
		t.Fatal(err)
	}
}
