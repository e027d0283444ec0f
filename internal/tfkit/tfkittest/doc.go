// Package tfkittest holds test helpers for code built on tfkit: the check
// that a model's codec matches the framework's reflection (codec.go) and
// plan helpers (plan.go). Only tests import it. (Tests start the mock
// through internal/acctest/mocktest.)
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/tfkit.
package tfkittest
