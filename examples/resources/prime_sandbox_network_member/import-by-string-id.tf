import {
  to = prime_sandbox_network_member.tool
  id = "net_0123456789abcdef/cm0abc123def456ghi789jklm"
}
