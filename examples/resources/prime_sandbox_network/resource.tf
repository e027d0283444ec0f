# A network where agents may call the tool server on port 8080, and
# nothing else: rules are directed (agent -> tools) and allow-only.
resource "prime_sandbox_network" "eval" {
  name = "eval-run-7"

  rules = [
    { from = "tag:agent", to = "tag:tools", ports = [8080] },
  ]
}

# rules = [] (the default) lets no member reach another. The provider always
# sends the list, so the platform's contradictory default never applies.
resource "prime_sandbox_network" "closed" {
  name = "quarantine"
}
