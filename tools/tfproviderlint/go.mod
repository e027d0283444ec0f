// Pins tfproviderlint for `make lint`, which builds it into ./bin
// (go build -C tools/tfproviderlint …). Its own module, so its golang.org/x
// versions never move the provider's or the other tools'.
// Never edit by hand: go get -tool github.com/bflad/tfproviderlint/cmd/tfproviderlint@vX.Y.Z
// (name the version: the module proxy serves it but does not list versions).
module github.com/primeintellect/terraform-provider-prime/tools/tfproviderlint

go 1.26.0

tool github.com/bflad/tfproviderlint/cmd/tfproviderlint

require (
	github.com/bflad/gopaniccheck v0.1.0 // indirect
	github.com/bflad/tfproviderlint v0.31.0 // indirect
	golang.org/x/mod v0.23.0 // indirect
	golang.org/x/sync v0.11.0 // indirect
	golang.org/x/tools v0.30.0 // indirect
)
