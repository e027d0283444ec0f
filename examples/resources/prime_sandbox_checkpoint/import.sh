# A checkpoint is imported by its ID. ttl_seconds and triggers cannot be
# read back: the first apply records the configured values without
# replacing the checkpoint.
terraform import prime_sandbox_checkpoint.setup ckabc123def456ghi789jk
