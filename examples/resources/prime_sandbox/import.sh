# A sandbox is imported by its ID. Secrets, secrets_wo_version, guaranteed
# and a default start_command cannot be read back: the first apply records
# the configured values without replacing the sandbox (the plan warns).
terraform import prime_sandbox.example cm0abc123def456ghi789jklm
