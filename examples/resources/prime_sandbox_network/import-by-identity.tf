import {
  to = prime_sandbox_network.eval
  identity = {
    id = "net_0123456789abcdef"
  }
}
