package checkpoint

// What a checkpoint reports, shared by the resource and the data source:
// the model fields, their descriptions, and the conversion from the
// platform's record.

import (
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// Bounds of ttl_seconds. [I] The published API reference renders its
// example as 15768030, the midpoint of 60 s and 365 days, as its other
// examples are midpoints of their published bounds; the bounds themselves
// are not visible.
const (
	MinTTLSeconds = 60
	MaxTTLSeconds = 365 * 24 * 60 * 60
)

// DefaultCreateTimeout bounds the wait for DURABLE. [I] The platform
// publishes no upload time; a root file system of tens of GB uploads in
// minutes, so 20 minutes leaves room without hiding a stuck upload.
const DefaultCreateTimeout = 20 * time.Minute

// DefaultDeleteTimeout bounds the wait, on destroy, for a checkpoint still
// uploading (the platform keeps pending checkpoints on a delete) to finish
// before it is deleted.
const DefaultDeleteTimeout = 5 * time.Minute

// Descriptions of the reported attributes, shared by the resource and the
// data source.
const (
	idDoc       = "The checkpoint's ID, assigned by the platform (1 to 64 characters). A sandbox restores from it with `checkpoint_id`."
	sandboxDoc  = "ID of the VM sandbox whose root file system is checkpointed. The sandbox must be `RUNNING`."
	stateDoc    = "The checkpoint's state: `PENDING` → `FROZEN` → `DURABLE`; `FAILED` and `DELETING` are terminal. Only a `DURABLE` checkpoint can be restored, and only a `DURABLE` one outlives its sandbox."
	parentDoc   = "The checkpoint the source sandbox was itself restored from, if any (null otherwise)."
	depthDoc    = "How many checkpoints deep the chain is: 1 for a sandbox that was not restored from one."
	imageDoc    = "The source sandbox's `docker_image`; a restored sandbox boots it with the checkpoint's files."
	diskDoc     = "The source sandbox's disk size in bytes (a restored sandbox gets the same disk)."
	storedDoc   = "Bytes the checkpoint stores (billed as checkpoint storage); null until it is `DURABLE`."
	createdDoc  = "When the checkpoint was requested (RFC 3339)."
	dataSrcDesc = "Reads a checkpoint of a VM sandbox's root file system by ID: its state and sizes. Only a " +
		"`DURABLE` checkpoint can be restored; use the `prime_sandbox_checkpoint` resource to take one and wait for that."
)

// Fields are the attributes a checkpoint reports, in the resource and the
// data source alike.
type Fields struct {
	ID            types.String `tfsdk:"id"`
	SandboxID     types.String `tfsdk:"sandbox_id"`
	State         types.String `tfsdk:"state"`
	ParentID      types.String `tfsdk:"parent_id"`
	Depth         types.Int64  `tfsdk:"depth"`
	DockerImage   types.String `tfsdk:"docker_image"`
	DiskSizeBytes types.Int64  `tfsdk:"disk_size_bytes"`
	StoredBytes   types.Int64  `tfsdk:"stored_bytes"`
	CreatedAt     types.String `tfsdk:"created_at"`
}

// fieldsOf is a platform record as attributes.
func fieldsOf(ck prime.Checkpoint) Fields {
	f := Fields{
		ID:            types.StringValue(ck.ID),
		SandboxID:     types.StringValue(ck.SandboxID),
		State:         types.StringValue(ck.State),
		ParentID:      types.StringPointerValue(ck.ParentID),
		Depth:         types.Int64Value(int64(ck.Depth)),
		DockerImage:   types.StringValue(ck.DockerImage),
		DiskSizeBytes: types.Int64PointerValue(ck.DiskSizeBytes),
		StoredBytes:   types.Int64PointerValue(ck.StoredBytes),
		CreatedAt:     types.StringNull(),
	}
	if !ck.CreatedAt.IsZero() {
		f.CreatedAt = types.StringValue(ck.CreatedAt.UTC().Format(time.RFC3339))
	}
	return f
}
