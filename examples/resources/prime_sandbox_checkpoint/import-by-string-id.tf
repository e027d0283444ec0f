import {
  to = prime_sandbox_checkpoint.setup
  id = "ckabc123def456ghi789jk"
}
