import {
  to = prime_sandbox_checkpoint.setup
  identity = {
    id = "ckabc123def456ghi789jk"
  }
}
