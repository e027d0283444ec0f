// Package mocktest is the one way tests start prime-mock: in process, with
// quick timers, an optional hook in front of it and a recorder of the API
// requests it received. The acceptance tests reach it through
// internal/acctest; it is a package of its own because the domains' unit
// tests (internal test packages, which acctest's import of the provider
// would turn into an import cycle) use it too. Only tests import it.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-testing/..., internal/prime, internal/primemock.
package mocktest
