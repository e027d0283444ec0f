# A sandbox is imported by its ID. Secrets and secrets_wo_version cannot be
# read back: the first apply records the configured values without replacing
# the sandbox (the plan warns).
terraform import prime_sandbox.example cm0abc123def456ghi789jklm
