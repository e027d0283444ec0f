package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// cpuProfileEnv names a directory: when it is set, the provider process
// writes its CPU profile there, as cpu-<pid>.pprof, when Terraform shuts it
// down (make bench summarises the profiles of its runs). A process that is
// killed writes nothing.
const cpuProfileEnv = "PRIME_PROVIDER_CPU_PROFILE_DIR"

// startCPUProfile starts the profile when cpuProfileEnv asks for one and
// returns what stops and writes it (a no-op otherwise). A profile that
// cannot be started is reported on stderr, which Terraform logs, and the
// provider serves as usual.
func startCPUProfile() (stop func()) {
	dir := os.Getenv(cpuProfileEnv)
	if dir == "" {
		return func() {}
	}
	path := filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid()))
	f, err := os.Create(path) //nolint:gosec // the directory the benchmark named
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpu profile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "cpu profile:", err)
		_ = f.Close()
		_ = os.Remove(path) //nolint:gosec // G703: the file just created
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
