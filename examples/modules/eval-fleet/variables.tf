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
  description = "vCPUs (whole), memory and disk (GB) of each member. Unset fields take the provider's defaults (1 vCPU, 1 GB, 5 GB). Changing them replaces the fleet."
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

  validation {
    condition     = var.resources.cpu_cores == null ? true : floor(var.resources.cpu_cores) == var.resources.cpu_cores
    error_message = "cpu_cores must be a whole number of vCPUs."
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
  description = "Lifetime of each member in minutes (paused time counts). Default `-1`: no lifetime limit, as verifiers runs rollouts, so a long evaluation is not killed at the platform's default of 60 minutes; `idle_timeout_minutes` stops forgotten members. Null takes the provider's default (60)."
  type        = number
  default     = -1

  validation {
    condition     = var.timeout_minutes == null ? true : var.timeout_minutes < 0 || var.timeout_minutes >= 1
    error_message = "timeout_minutes must be negative for no lifetime limit (-1) or >= 1."
  }
}

variable "idle_timeout_minutes" {
  description = "Stop a member after this many minutes without command or file activity (any command, upload or read resets the clock; a running agent keeps it pinned). 1 to 1440, and at most `timeout_minutes` when that is finite. Default `60`. Null for none."
  type        = number
  default     = 60

  validation {
    condition     = var.idle_timeout_minutes == null ? true : var.idle_timeout_minutes >= 1 && var.idle_timeout_minutes <= 1440 && (coalesce(var.timeout_minutes, 60) < 0 || var.idle_timeout_minutes <= coalesce(var.timeout_minutes, 60))
    error_message = "idle_timeout_minutes must be between 1 and 1440, and at most timeout_minutes when that is finite."
  }
}

variable "arch" {
  description = "CPU architecture of every member: `amd64` or `arm64`. Null takes the platform's default (`amd64`). Changing it replaces the fleet."
  type        = string
  default     = null

  validation {
    condition     = var.arch == null ? true : contains(["amd64", "arm64"], var.arch)
    error_message = "arch must be \"amd64\" or \"arm64\"."
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
  description = "Start command of each member in argv form, run without a shell, e.g. `[\"/bin/sh\", \"-c\", \"python -m http.server\"]`. One-shot: when its process exits, the member stops. Null (the usual case): none, and the member stays up."
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

# --- Task files -----------------------------------------------------------

variable "task_dir" {
  description = "Local directory uploaded to every member at `task_path` before the setup runs (`prime_fleet_file` with `source_dir`: one archive, unpacked there). Fingerprinted at plan time: any change in the tree (a file's name, content or permission bits) uploads it again and runs the setup again (re-opening and re-locking egress) and then every member's agent; members added later get the same task without re-running the others. Relative to where Terraform runs: use `path.module`. Null for none."
  type        = string
  default     = null

  validation {
    condition     = var.task_dir == null ? true : length(trimspace(var.task_dir)) > 0
    error_message = "task_dir must be a local directory (or null for none)."
  }
}

variable "task_path" {
  description = "Absolute path in each member where `task_dir` is unpacked."
  type        = string
  default     = "/task"
  nullable    = false

  validation {
    condition     = startswith(var.task_path, "/") && trimsuffix(var.task_path, "/") != ""
    error_message = "task_path must be an absolute path other than \"/\", e.g. \"/task\"."
  }
}

variable "member_tasks" {
  description = "Each member's own task, by member key: `{ dir = \"tasks/a\" }` (a local directory, unpacked into `member_task_path`) or `{ content = \"...\" }` (text, written as the file `member_task_path`). Members without an entry get none. Uploaded before the setup; a change of one member's task uploads to that member and runs its agent again, alone, in place (no re-lock, no other member touched). Stored in state when given as `content`: not for secrets."
  type = map(object({
    dir     = optional(string)
    content = optional(string)
  }))
  default  = {}
  nullable = false

  validation {
    condition     = alltrue([for t in values(var.member_tasks) : (t.dir == null) != (t.content == null)])
    error_message = "Each member_tasks entry needs exactly one of dir and content."
  }

  validation {
    condition = alltrue([
      for k in keys(var.member_tasks) : contains(var.members != null ? tolist(var.members) : [for i in range(coalesce(var.size, 0)) : tostring(i)], k)
    ])
    error_message = "member_tasks keys must be member keys (of members, or \"0\" … \"size-1\")."
  }
}

variable "member_task_path" {
  description = "Absolute path in each member of its `member_tasks` entry: the directory a `dir` is unpacked into, or the file a `content` is written to."
  type        = string
  default     = "/task/member"
  nullable    = false

  validation {
    condition     = startswith(var.member_task_path, "/") && trimsuffix(var.member_task_path, "/") != ""
    error_message = "member_task_path must be an absolute path other than \"/\", e.g. \"/task/member\"."
  }
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

variable "setup_mode" {
  description = "Where the trusted setup runs. `\"per_member\"` (default): on every member, with egress open, then the lock; each member is set up fresh. `\"once\"`: once, in a template sandbox (`<name_prefix>-template`) booted from `image` with egress open; the template is checkpointed once the setup succeeded (`prime_sandbox_checkpoint`, waited for until `DURABLE`) and then deleted (the checkpoint outlives it, so it is billed only until then), and every member is restored from the checkpoint (`checkpoint_id`, a cold boot: files, not memory) and locked with `allow`/`block` right after its restore, before anything runs on it. The setup's cost and its load on package indexes are paid once instead of N times; every member starts from the same bytes. The task directory goes into the template before the setup; `member_tasks` go to each member after its restore. A change of the setup, its environment or the task directory makes a new template, so one apply runs the setup again there, checkpoints it, and only once that checkpoint is `DURABLE` restores every member from it, in place; a new setup that fails leaves the members as they were. Destroy deletes the checkpoint. Changing the mode replaces the fleet."
  type        = string
  default     = "per_member"
  nullable    = false

  validation {
    condition     = contains(["per_member", "once"], var.setup_mode)
    error_message = "setup_mode must be \"per_member\" or \"once\"."
  }

  validation {
    condition     = var.setup_mode != "once" || length(var.setup_commands) > 0
    error_message = "setup_mode \"once\" needs setup_commands: without a setup there is nothing to run once (use per_member)."
  }

  validation {
    condition     = var.setup_mode != "once" || !var.born_restricted
    error_message = "setup_mode \"once\" already restricts every member right after its restore; born_restricted is for per_member (it would run the setup under the lists)."
  }

  validation {
    condition     = var.setup_mode != "once" || var.members == null || !contains(coalesce(var.members, []), "template")
    error_message = "With setup_mode \"once\" the template is named <name_prefix>-template: no member may be keyed \"template\"."
  }
}

variable "checkpoint_timeout" {
  description = "With `setup_mode = \"once\"`: how long to wait for the template's checkpoint to become `DURABLE` and the template to be deleted, as a duration such as `\"20m\"`. On timeout the apply fails closed and no member is restored."
  type        = string
  default     = "20m"
  nullable    = false

  validation {
    condition     = can(regex("^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$", var.checkpoint_timeout))
    error_message = "checkpoint_timeout must be a duration such as \"20m\" or \"1h\"."
  }
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
  description = "Optional agent run on every ready member once the lists are enforced (and after the task files are in): `commands` (steps, in order), and optionally `background` (default `true`: each step a background job in the member, which survives a cut connection or a killed apply; `false` holds one gateway call per step), `timeout_seconds` (per step, default 3600), `allowed_exit_codes` (default `[0]`), `env`, `member_env` (member key → extra variables for that member's steps, merged over `env`; every member also gets `PRIME_MEMBER_KEY`) and `max_concurrency`. It runs again on every member after every re-lock (a change of `allow`, `block` or `routes`, in every mode) and whenever what the members came from changes (the image, the setup or its environment, the task directory, the checkpoint), always after the new lists are enforced; a member whose task or `member_env` entry changes runs again alone. Each run is recorded (the `runs` output, and `run.json` in `results_local_dir`). Null leaves the agent to the caller: run it on `ready_sandbox_ids` with `triggers = agent_triggers` and `member_triggers = task_fingerprints`."
  type = object({
    commands           = list(string)
    background         = optional(bool, true)
    timeout_seconds    = optional(number, 3600)
    allowed_exit_codes = optional(set(number), [0])
    env                = optional(map(string))
    member_env         = optional(map(map(string)))
    max_concurrency    = optional(number)
  })
  default = null

  validation {
    condition     = var.agent == null ? true : length(var.agent.commands) > 0 && alltrue([for c in var.agent.commands : length(trimspace(c)) > 0])
    error_message = "agent.commands needs at least one non-empty command."
  }

  validation {
    condition = var.agent == null ? true : alltrue([
      for k in keys(coalesce(var.agent.member_env, {})) : contains(var.members != null ? tolist(var.members) : [for i in range(coalesce(var.size, 0)) : tostring(i)], k)
    ])
    error_message = "agent.member_env keys must be member keys (of members, or \"0\" … \"size-1\")."
  }
}

variable "on_member_failure" {
  description = "What a member whose agent failed does — a step's exit code not allowed, a timeout, a lost sandbox or job. `\"fail\"` (default): the apply fails with one error naming every failed member, and Terraform leaves the outputs that depend on the agent as the last successful apply left them (each run in `runs` names its sandbox, to compare with `sandbox_ids`). `\"record\"`: the failure is recorded (`failures`, `runs`) and the apply goes on with the others, so every output is current: a member whose agent failed gets no reward (its results, if any, are still downloaded), and its agent runs again on the next apply. A failed setup always fails the apply: its members would otherwise be locked half set up (and the template's, with `setup_mode = \"once\"`, restored from)."
  type        = string
  default     = "fail"
  nullable    = false

  validation {
    condition     = contains(["fail", "record"], var.on_member_failure)
    error_message = "on_member_failure must be \"fail\" or \"record\"."
  }
}

# --- Results --------------------------------------------------------------

variable "results_path" {
  description = "Absolute path of the directory in each member where the agent writes its results, e.g. `\"/results\"`: removed right before every run of the member's agent, and downloaded once it succeeded, to `<results_local_dir>/<member key>/results` (`prime_fleet_artifact`), again for a member whenever its agent runs again, and only what that run wrote (checked against the run). A member whose run wrote none is null in `results_local_paths`, and the earlier run's download is removed. Needs `agent`. Null downloads nothing."
  type        = string
  default     = null

  validation {
    condition     = var.results_path == null ? true : startswith(var.results_path, "/") && trimsuffix(var.results_path, "/") != ""
    error_message = "results_path must be an absolute path other than \"/\", e.g. \"/results\"."
  }

  validation {
    condition     = var.results_path == null || var.agent != null
    error_message = "results_path needs agent: the download waits for the module's agent."
  }
}

variable "results_local_dir" {
  description = "Local directory of the agent's records and results: `progress.json` (each member's state while the agent runs; `progress_file`) and, per member, `<member key>/run.json` (its run's record, as the `runs` output), its logs (background agents) and `<member key>/results` (`results_path`). Relative paths are relative to where Terraform runs. The files stay there after `terraform destroy`. Null for `results` in the root module's directory."
  type        = string
  default     = null

  validation {
    condition     = var.results_local_dir == null ? true : length(trimspace(var.results_local_dir)) > 0
    error_message = "results_local_dir must not be empty (null for \"results\" in the root module's directory)."
  }
}

variable "reward_file" {
  description = "Absolute path in each member of a small JSON file the agent writes, e.g. `\"/results/reward.json\"`: removed right before every run of the member's agent, and read back once it succeeded (the `prime_fleet_file` data source, up to 1 MiB, kept in state) into the `rewards` output, only if that run wrote it (checked against the run: an earlier run's file reads as null). Needs `agent`. Null reads nothing."
  type        = string
  default     = null

  validation {
    condition     = var.reward_file == null ? true : startswith(var.reward_file, "/") && !endswith(var.reward_file, "/")
    error_message = "reward_file must be the absolute path of a file, e.g. \"/results/reward.json\"."
  }

  validation {
    condition     = var.reward_file == null || var.agent != null
    error_message = "reward_file needs agent: the read waits for the module's agent."
  }
}

variable "reward_field" {
  description = "The top-level field of `reward_file`'s JSON object that `rewards` reports, e.g. `\"reward\"` for `{\"reward\": 0.5}`."
  type        = string
  default     = "reward"
  nullable    = false

  validation {
    condition     = length(trimspace(var.reward_field)) > 0
    error_message = "reward_field must name a field of the reward file's JSON object."
  }
}
