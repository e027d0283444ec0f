import {
  to = prime_sandbox_network.eval
  id = "net_0123456789abcdef"
}
