// testsummary is a module of its own so that the provider's go.mod, lint
// and `go test ./...` never see it; it needs nothing but the standard library.
module github.com/primeintellect/terraform-provider-prime/cmd/testsummary

go 1.26
