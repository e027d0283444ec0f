# A network is imported by its ID.
terraform import prime_sandbox_network.eval net_0123456789abcdef
