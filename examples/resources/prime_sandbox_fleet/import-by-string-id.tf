import {
  to = prime_sandbox_fleet.eval
  id = "label:eval-run-42"
}
