# The single-sandbox form is imported by "<network_id>/<sandbox_id>"; a
# fleet's membership cannot be imported.
terraform import prime_sandbox_network_member.tool net_0123456789abcdef/cm0abc123def456ghi789jklm
