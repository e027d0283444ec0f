// Package archtest holds the test that keeps the maps true: every
// package's documentation (its doc.go; a command's main.go) says what the
// package holds and, in one sentence a test can read, what it may import:
//
//	It may import: the standard library, internal/prime, github.com/hashicorp/terraform-plugin-framework/....
//
// The sentence lists entries separated by commas and ends with a period at
// the end of a line. An entry is "the standard library"; a package of this
// module by its path below the module root ("internal/prime"); or a
// package of another module by its import path. An entry ending in "/..."
// also allows the packages below it, and "*" inside one path element
// matches as in path.Match ("github.com/hashicorp/terraform-plugin-*/...").
// A package that imports nothing of the module says "It may import: the
// standard library." (and lists its other modules, if any).
//
// TestMapsTellTheTruth (archtest_test.go) reads every package of the
// module (not the tests' imports, not the nested modules under tools/ and
// cmd/testsummary) and fails when a package has no such sentence, imports
// what its sentence does not allow, imports from a higher layer than its
// own, or when the imports of the module's packages form a circle. The
// layers (imports point down or stay level, never up) are those of the
// design, from the top:
//
//	7  the provider binary (main.go) and the programs under cmd/; the
//	   acceptance tests' harness (internal/acctest, which serves the
//	   provider) and examples/ (whose tests span every domain)
//	6  internal/provider: the provider type
//	5  the domains: internal/sandbox, command, files, egress, checkpoint,
//	   network, volume, image, ssh
//	4  the kits the domains share (internal/memberkit, internal/tfkit and
//	   its tfkittest) and the soak harness (internal/soak)
//	3  internal/journal, and the mock (internal/primemock and the packages
//	   under it, and internal/acctest/mocktest, which starts it in a
//	   test), which stands beside the provider's stack and may import
//	   only the client's wire types below it
//	2  internal/prime: the API client, no Terraform imports
//	1  internal/commandsession (generated), internal/tfcli, this package
//
// A package that is not in this table fails the test until it is placed.
//
// It may import: the standard library.
package archtest
