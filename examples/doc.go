// Package examples holds no code: its tests hold the Terraform under
// examples/ to the provider built from this tree. They live here, beside
// what they test, because an example or the eval-fleet module spans every
// domain (a sandbox, its files, commands and egress lock together), so no
// one domain's test package is theirs:
//
//   - examples_test.go, examples_tf14_test.go: every example directory is
//     fmt clean, validates without a warning and plans against the mock;
//     every resource, data source, action and list resource has one;
//   - module_*_test.go: the eval-fleet module (examples/modules/eval-fleet)
//     applied end to end, its protocol order checked from the mock's events;
//   - todays_docs_protocol_test.go: the protocol as the docs teach it.
//
// Its tests import internal/acctest, internal/acctest/mocktest,
// internal/provider (for its constructor), internal/prime and
// internal/primemock; nothing imports it.
//
// It may import: the standard library.
package examples
