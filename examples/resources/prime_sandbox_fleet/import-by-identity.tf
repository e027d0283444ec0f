# By the label its members carry (every running sandbox with it)...
import {
  to = prime_sandbox_fleet.eval
  identity = {
    label = "eval-run-42"
  }
}

# ...or, for a fleet without a label of its own, by its members' IDs:
#
#   identity = {
#     sandbox_ids = ["cm0abc123def456ghi789jklm", "cm0bcd234efg567hij890klmn"]
#   }
