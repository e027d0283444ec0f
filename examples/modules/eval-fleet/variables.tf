variable "sandbox_names" {
  description = "Names of the sandboxes, one per rollout. They are the for_each keys of every resource and output map, so adding or removing a name never disturbs the others."
  type        = set(string)
  nullable    = false

  validation {
    condition     = alltrue([for n in var.sandbox_names : can(regex("^[A-Za-z0-9][A-Za-z0-9_.-]*$", n))])
    error_message = "Each sandbox name must start with a letter or digit and contain only letters, digits, \"_\", \".\" and \"-\"."
  }
}

variable "image" {
  description = "Docker image every sandbox runs, e.g. \"python:3.12-slim\"."
  type        = string
  nullable    = false

  validation {
    condition     = length(trimspace(var.image)) > 0
    error_message = "image must not be empty."
  }
}

variable "resources" {
  description = "CPU cores, memory and disk (GB) of each sandbox. Unset fields defer to the platform's defaults."
  type = object({
    cpu_cores    = optional(number)
    memory_gb    = optional(number)
    disk_size_gb = optional(number)
  })
  default  = {}
  nullable = false

  validation {
    condition     = alltrue([for v in [var.resources.cpu_cores, var.resources.memory_gb, var.resources.disk_size_gb] : v == null ? true : v > 0])
    error_message = "cpu_cores, memory_gb and disk_size_gb must be greater than 0 when set."
  }
}

variable "allow" {
  description = "Agent-phase allowlist: only these destinations (plus the hosts of routes) are reachable once setup is done. [] leaves only the routes. Mutually exclusive with block; leave both null for unrestricted egress."
  type        = set(string)
  default     = null

  validation {
    condition     = var.allow == null || var.block == null
    error_message = "allow and block are mutually exclusive: set one of them (or neither, for unrestricted egress)."
  }
}

variable "block" {
  description = "Agent-phase blocklist: everything except these destinations is reachable. Mutually exclusive with allow."
  type        = set(string)
  default     = null
}

variable "routes" {
  description = "Framework routes (http(s) URLs: interception endpoint, MCP servers) the agent must always reach. In allow mode their hosts are allowed automatically; in block mode blocking one is a plan error. Only used when allow or block is set."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "setup_commands" {
  description = "Trusted setup commands, run in order in every sandbox while egress is still open, each only after the previous one succeeded everywhere. Changing the list replaces the sandboxes, so setup never runs under an agent-phase policy."
  type        = list(string)
  default     = []
  nullable    = false

  validation {
    condition     = length(var.setup_commands) <= 8
    error_message = "At most 8 setup commands are supported; join related commands with \"&&\"."
  }

  validation {
    condition     = alltrue([for c in var.setup_commands : length(trimspace(c)) > 0])
    error_message = "Setup commands must not be empty."
  }
}

variable "setup_timeout_seconds" {
  description = "How long each setup command may run, in seconds."
  type        = number
  default     = 300
  nullable    = false
}

variable "labels" {
  description = "Labels put on every sandbox, for the prime_sandboxes data source and bulk clean-up."
  type        = set(string)
  default     = []
  nullable    = false
}

variable "policy_timeout" {
  description = "How long to wait for the data plane to enforce (and, on destroy, to lift) each egress policy before failing closed, as a duration such as \"60s\" or \"2m\"."
  type        = string
  default     = "60s"
  nullable    = false

  validation {
    condition     = can(regex("^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$", var.policy_timeout))
    error_message = "policy_timeout must be a duration such as \"60s\", \"2m\" or \"1m30s\"."
  }
}
