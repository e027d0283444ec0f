// Package tfkittest holds test helpers for code built on tfkit: the check
// that a model's codec matches the framework's reflection (codec.go), plan
// helpers (plan.go), and an in-process prime-mock with a client for unit
// tests that call the API (mock.go). Only tests import it.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/tfkit, internal/prime, internal/primemock.
package tfkittest
