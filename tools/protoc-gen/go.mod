// Pins the protobuf code generators buf runs for `make generate`:
// protoc-gen-go at the provider's protobuf runtime version and
// protoc-gen-connect-go at its connect version, so generated code and runtime
// always match. Built into ./bin. Never edit by hand: go get -tool.
module github.com/primeintellect/terraform-provider-prime/tools/protoc-gen

go 1.26.0

tool (
	connectrpc.com/connect/cmd/protoc-gen-connect-go
	google.golang.org/protobuf/cmd/protoc-gen-go
)

require (
	connectrpc.com/connect v1.21.1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
