package prime

// Placeholder: the gateway exec client is being written (see the mock brief).
type gatewayTokens struct{}
