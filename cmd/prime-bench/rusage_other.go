//go:build !unix

package main

import (
	"os"
	"time"
)

// selfCPU is unknown without getrusage: the SDK run reports 0 s of client
// CPU.
func selfCPU() time.Duration { return 0 }

// maxRSSKB is unknown without getrusage: RSS figures read 0.
func maxRSSKB(*os.ProcessState) int64 { return 0 }
