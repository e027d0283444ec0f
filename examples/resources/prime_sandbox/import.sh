# A sandbox is imported by its ID.
terraform import prime_sandbox.example cm0abc123def456ghi789jklm
