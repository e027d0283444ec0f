# A fleet is imported by a label: every running sandbox that carries it
# becomes a member...
terraform import prime_sandbox_fleet.eval label:eval-run-42

# ...or by a comma-separated list of sandbox IDs. Either way, name_prefix
# and the member keys come from the member names, <name_prefix>-<key>.
terraform import prime_sandbox_fleet.eval cm0abc123def456ghi789jklm,cm0bcd234efg567hij890klmn,cm0cde345fgh678ijk901lmno
