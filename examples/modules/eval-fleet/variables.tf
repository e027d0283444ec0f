# --- Members --------------------------------------------------------------

variable "name_prefix" {
  description = "Sandbox names are `<name_prefix>-<member key>`. Changing it replaces the fleet."
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9_.-]*$", var.name_prefix))
    error_message = "name_prefix must start with a letter or digit and contain only letters, digits, \"_\", \".\" and \"-\"."
  }
}

variable "members" {
  description = "Member keys, e.g. task IDs: one sandbox each, and the keys of every per-member output. Adding or removing keys creates or deletes just those members. Exactly one of `members` and `size`."
  type        = set(string)
  default     = null

  validation {
    condition     = (var.members == null) != (var.size == null)
    error_message = "Set exactly one of members and size."
  }

  validation {
    condition     = var.members == null ? true : alltrue([for k in var.members : can(regex("^[A-Za-z0-9._-]{1,100}$", k))])
    error_message = "Member keys must be 1 to 100 letters, digits, \".\", \"_\" or \"-\"."
  }
}

variable "size" {
  description = "Number of members, keyed `\"0\"` … `\"size-1\"`. Exactly one of `members` and `size`."
  type        = number
  default     = null

  validation {
    condition     = var.size == null ? true : var.size >= 0 && var.size <= 10000 && floor(var.size) == var.size
    error_message = "size must be a whole number from 0 to 10000."
  }
}

# --- Sandbox template -----------------------------------------------------

variable "image" {
  description = "Docker image every member runs as a VM, e.g. `\"python:3.12-slim\"`. Changing it replaces the fleet."
  type        = string
  nullable    = false

  validation {
    condition     = length(trimspace(var.image)) > 0
    error_message = "image must not be empty."
  }
}

variable "resources" {
  description = "CPU cores, memory and disk (GB) of each member. Unset fields take the provider's defaults (the Prime SDK's). Changing them replaces the fleet."
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

variable "gpu" {
  description = "GPUs of each member: `{ type = \"A100\", count = 1 }`. Null for none."
  type = object({
    type  = string
    count = number
  })
  default = null

  validation {
    condition     = var.gpu == null ? true : var.gpu.count >= 1 && length(trimspace(var.gpu.type)) > 0
    error_message = "gpu needs a non-empty type and a count of at least 1 (leave gpu null for none)."
  }
}

variable "timeout_minutes" {
  description = "Lifetime of each member in minutes, counted while it runs; `-1` for no limit. Null takes the provider's default (60)."
  type        = number
  default     = null

  validation {
    condition     = var.timeout_minutes == null ? true : var.timeout_minutes == -1 || var.timeout_minutes >= 1
    error_message = "timeout_minutes must be -1 (no limit) or at least 1."
  }
}

variable "idle_timeout_minutes" {
  description = "Stop a member after this many minutes without command or file activity. At most `timeout_minutes` when that is positive. Null for none."
  type        = number
  default     = null

  validation {
    condition     = var.idle_timeout_minutes == null ? true : var.idle_timeout_minutes >= 1 && (var.timeout_minutes == null || var.timeout_minutes <= 0 || var.idle_timeout_minutes <= var.timeout_minutes)
    error_message = "idle_timeout_minutes must be at least 1, and at most timeout_minutes when that is positive."
  }
}

variable "environment" {
  description = "Environment variables of every member (`environment_vars`). Stored in state: not for secrets, use `secrets_wo`."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "secrets_wo" {
  description = "Secret environment variables of every member, write-only: sent at create, never stored in state or plan. Ephemeral values are accepted. Bump `secrets_wo_version` to roll them (that replaces the fleet). Note that the agent sees them too: setup-only credentials belong in `setup_env_wo`."
  type        = map(string)
  default     = null
  sensitive   = true
  ephemeral   = true
}

variable "secrets_wo_version" {
  description = "Any number you change whenever `secrets_wo` changes."
  type        = number
  default     = null
}

variable "region" {
  description = "Region to run in, e.g. `\"us\"`. Null lets the platform choose."
  type        = string
  default     = null
}

variable "team_id" {
  description = "Team that owns the sandboxes. Null uses the provider's `team_id`, if any."
  type        = string
  default     = null
}

variable "start_argv" {
  description = "Start command of each VM in argv form, e.g. `[\"/bin/sh\", \"-c\", \"python -m http.server\"]`. Null runs the image's default."
  type        = list(string)
  default     = null

  validation {
    condition     = var.start_argv == null ? true : length(var.start_argv) > 0
    error_message = "start_argv needs at least the executable (or null)."
  }
}

variable "labels" {
  description = "Labels on every member, for the `prime_sandboxes` data source, import (`label:<label>`) and bulk clean-up."
  type        = set(string)
  default     = []
  nullable    = false
}

# --- Setup ----------------------------------------------------------------

variable "setup_commands" {
  description = "Trusted setup steps, run in order on every member (a member stops at its first failing step). With egress open unless `born_restricted`. Changing the list re-opens egress, runs every step again with the network open and locks again, in one apply; the sandboxes stay."
  type        = list(string)
  default     = []
  nullable    = false

  validation {
    condition     = alltrue([for c in var.setup_commands : length(trimspace(c)) > 0])
    error_message = "Setup commands must not be empty."
  }
}

variable "setup_timeout_seconds" {
  description = "How long each setup step may run on each member, in seconds."
  type        = number
  default     = 300
  nullable    = false

  validation {
    condition     = var.setup_timeout_seconds >= 1 && var.setup_timeout_seconds <= 86400
    error_message = "setup_timeout_seconds must be between 1 and 86400."
  }
}

variable "setup_env" {
  description = "Extra environment variables of the setup steps only. Stored in state: not for secrets, use `setup_env_wo`."
  type        = map(string)
  default     = null
}

variable "setup_env_wo" {
  description = "Secret environment variables of the setup steps only, write-only (never stored; ephemeral values accepted). Bump `setup_env_wo_version` to run the setup again with new values."
  type        = map(string)
  default     = null
  sensitive   = true
  ephemeral   = true
}

variable "setup_env_wo_version" {
  description = "Any number you change whenever `setup_env_wo` changes; changing it runs the setup again (re-opening and re-locking egress)."
  type        = number
  default     = null
}

# --- Egress ---------------------------------------------------------------

variable "allow" {
  description = "Agent-phase allowlist: only these destinations (plus the hosts of `routes`) are reachable. `[]` leaves only the routes. Exactly one of `allow` and `block` for a restricted fleet; leave both null for unrestricted egress."
  type        = set(string)
  default     = null

  validation {
    condition     = var.allow == null || var.block == null
    error_message = "allow and block are mutually exclusive: set one of them (or neither, for unrestricted egress)."
  }
}

variable "block" {
  description = "Agent-phase blocklist: everything except these destinations is reachable. Mutually exclusive with `allow`."
  type        = set(string)
  default     = null
}

variable "routes" {
  description = "Framework routes (http(s) URLs: interception endpoint, MCP servers) the agent must always reach. In allow mode their hosts are allowed automatically; in block mode blocking one is a plan error. Only used with `allow` or `block`."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "born_restricted" {
  description = "Put `allow`/`block`/`routes` into the fleet's `egress` block, so every member is born restricted and never has an open second, instead of locking with a policy after the setup. For runs that need no open setup: the setup commands (if any) then run under these lists."
  type        = bool
  default     = false
  nullable    = false

  validation {
    condition     = !var.born_restricted || var.allow != null || var.block != null
    error_message = "born_restricted needs allow or block."
  }
}

variable "policy_timeout" {
  description = "How long to wait, per member, for the data plane to enforce the lists (and, on destroy, to restore open egress) before failing closed, as a duration such as `\"60s\"` or `\"2m\"`. With `born_restricted` it is the fleet's egress timeout."
  type        = string
  default     = "60s"
  nullable    = false

  validation {
    condition     = can(regex("^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$", var.policy_timeout))
    error_message = "policy_timeout must be a duration such as \"60s\", \"2m\" or \"1m30s\"."
  }
}

# --- Agent ----------------------------------------------------------------

variable "agent" {
  description = "Optional agent run on every ready member once the lists are enforced: `commands` (steps, in order), and optionally `timeout_seconds` (per step, default 3600), `allowed_exit_codes` (default `[0]`), `env` and `max_concurrency`. It runs again after every re-lock. Null leaves the agent to the caller: run it on `ready_sandbox_ids` with `triggers = { lock = lock_id }`."
  type = object({
    commands           = list(string)
    timeout_seconds    = optional(number, 3600)
    allowed_exit_codes = optional(set(number), [0])
    env                = optional(map(string))
    max_concurrency    = optional(number)
  })
  default = null

  validation {
    condition     = var.agent == null ? true : length(var.agent.commands) > 0 && alltrue([for c in var.agent.commands : length(trimspace(c)) > 0])
    error_message = "agent.commands needs at least one non-empty command."
  }
}
