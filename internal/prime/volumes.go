package prime

// Volumes: named disks of up to 100 GiB in the caller's personal scope or a
// team's. A sandbox created with a volume gets a private copy of the
// volume's latest published checkpoint (read-write by default, or
// read-only); publishing one sandbox's writes (POST
// /sandbox/{id}/volumes/{name}/publish) makes them the volume's new head for
// sandboxes created after the publish completes. team_id is a query
// parameter on get, update, delete and list, and a body key on create.
//
// Only the request field names of create and update and the reference
// pattern are published; the answers' shapes, the visibility field and the
// create request's volumes element are inferred [I] and kept minimal.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"
)

// Volume limits.
const (
	// MaxVolumeSizeGB is the published per-volume limit ("up to 100 GiB").
	MaxVolumeSizeGB = 100
	// MaxVolumesPerSandbox is the CLI's limit on --volume flags.
	MaxVolumesPerSandbox = 8
)

// Volume visibilities [I: the update page says "make it public or
// private"; the field name and spelling are not published, these follow
// the images API's PRIVATE|PUBLIC].
const (
	VolumePrivate = "PRIVATE"
	VolumePublic  = "PUBLIC"
)

// volumeNamePattern is one segment of the published volume reference
// pattern; a reference is a name or owner/name.
var (
	volumeNamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$`)
	volumeRefPattern  = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?(/[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?)?$`)
)

// ValidateVolumeName checks a new volume's name: 1 to 40 lowercase letters,
// digits and inner hyphens (one segment of the published reference
// pattern).
func ValidateVolumeName(name string) error {
	if !volumeNamePattern.MatchString(name) {
		return fmt.Errorf("%w: volume name %q: use 1 to 40 lowercase letters, digits and hyphens, starting and ending with a letter or digit", ErrInvalidRequest, name)
	}
	return nil
}

// ValidateVolumeRef checks a volume reference: a name, or owner/name.
func ValidateVolumeRef(ref string) error {
	if !volumeRefPattern.MatchString(ref) {
		return fmt.Errorf("%w: volume reference %q: a name or owner/name, each 1 to 40 lowercase letters, digits and hyphens", ErrInvalidRequest, ref)
	}
	return nil
}

// ValidateVolumeSize checks a size in GiB against the published limit.
func ValidateVolumeSize(sizeGB int) error {
	if sizeGB < 1 || sizeGB > MaxVolumeSizeGB {
		return fmt.Errorf("%w: size_gb must be between 1 and %d (GiB), got %d", ErrInvalidRequest, MaxVolumeSizeGB, sizeGB)
	}
	return nil
}

// Volume is a volume record [I: only name, team_id and size_gb are
// published (the create body); visibility and head_checkpoint_id are this
// client's reading of "make it public or private" and "the volume's latest
// checkpoint"].
type Volume struct {
	Name       string  `json:"name"`
	TeamID     *string `json:"team_id"`
	SizeGB     int     `json:"size_gb"`
	Visibility string  `json:"visibility"`
	// HeadCheckpointID is the checkpoint new attachments copy; nil while
	// the volume was never published (it is empty).
	HeadCheckpointID *string   `json:"head_checkpoint_id"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// UnmarshalJSON reads timestamps with or without a zone.
func (v *Volume) UnmarshalJSON(data []byte) error {
	type plain Volume
	return decodeWithISOTimes(data, (*plain)(v))
}

// CreateVolumeRequest is the POST /sandbox/volumes body.
type CreateVolumeRequest struct {
	Name   string  `json:"name"`
	TeamID *string `json:"team_id,omitempty"`
	SizeGB int     `json:"size_gb"`
}

// UpdateVolumeRequest is the PATCH body: grow (never shrink; the platform
// applies the new size to sandboxes created afterwards) and/or change the
// visibility. Nil fields are not sent.
type UpdateVolumeRequest struct {
	SizeGB     *int    `json:"size_gb,omitempty"`
	Visibility *string `json:"visibility,omitempty"`
}

func volumePath(ref string) string {
	// An owner/name reference keeps its slash: it is two path segments.
	segs := strings.Split(ref, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/sandbox/volumes/" + strings.Join(segs, "/")
}

// volumeQuery is the team scope of a volume call.
func (c *Client) volumeQuery(team string) url.Values {
	if team = c.teamOr(team); team != "" {
		return url.Values{"team_id": {team}}
	}
	return nil
}

// CreateVolume creates an empty volume (201). The configured team is used
// when the request names none. A create is not retried once it may have
// reached the server: a name is unique in its scope, so a repeat of a
// create that succeeded would answer a conflict.
func (c *Client) CreateVolume(ctx context.Context, req CreateVolumeRequest) (*Volume, error) {
	if err := ValidateVolumeName(req.Name); err != nil {
		return nil, err
	}
	if err := ValidateVolumeSize(req.SizeGB); err != nil {
		return nil, err
	}
	if req.TeamID == nil && c.cfg.TeamID != nil && *c.cfg.TeamID != "" {
		team := *c.cfg.TeamID
		req.TeamID = &team
	}
	var out Volume
	if err := c.do(ctx, call{method: http.MethodPost, path: "/sandbox/volumes", body: req, out: &out, retry: retryUnsent}); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetVolume reads a volume by name (or owner/name) in team's scope (empty:
// the configured team, or the caller's own). Unknown wraps ErrNotFound.
func (c *Client) GetVolume(ctx context.Context, ref, team string) (*Volume, error) {
	if err := ValidateVolumeRef(ref); err != nil {
		return nil, err
	}
	var out Volume
	if err := c.do(ctx, call{method: http.MethodGet, path: volumePath(ref), query: c.volumeQuery(team), out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	return &out, nil
}

// VolumeList is the list answer [I: {volumes: [...]}, as networks list].
type VolumeList struct {
	Volumes []Volume `json:"volumes"`
}

// ListVolumes lists the volumes of team's scope (empty: the configured
// team, or the caller's own).
func (c *Client) ListVolumes(ctx context.Context, team string) ([]Volume, error) {
	var out VolumeList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/sandbox/volumes", query: c.volumeQuery(team), out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	if out.Volumes == nil {
		out.Volumes = []Volume{}
	}
	return out.Volumes, nil
}

// UpdateVolume grows a volume and/or changes its visibility. A PATCH sets
// values, so a retry is harmless. Shrinking is refused by the platform;
// the caller, which knows the current size, should refuse it first.
func (c *Client) UpdateVolume(ctx context.Context, ref string, req UpdateVolumeRequest, team string) (*Volume, error) {
	if err := ValidateVolumeRef(ref); err != nil {
		return nil, err
	}
	if req.SizeGB == nil && req.Visibility == nil {
		return nil, fmt.Errorf("%w: a volume update needs size_gb or visibility", ErrInvalidRequest)
	}
	if req.SizeGB != nil {
		if err := ValidateVolumeSize(*req.SizeGB); err != nil {
			return nil, err
		}
	}
	if v := req.Visibility; v != nil && *v != VolumePrivate && *v != VolumePublic {
		return nil, fmt.Errorf("%w: visibility must be %s or %s, got %q", ErrInvalidRequest, VolumePrivate, VolumePublic, *v)
	}
	var out Volume
	if err := c.do(ctx, call{method: http.MethodPatch, path: volumePath(ref), query: c.volumeQuery(team), body: req, out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteVolume deletes a volume (any 2xx; the answer is not published).
// Unknown wraps ErrNotFound.
func (c *Client) DeleteVolume(ctx context.Context, ref, team string) error {
	if err := ValidateVolumeRef(ref); err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodDelete, path: volumePath(ref), query: c.volumeQuery(team), retry: retryIdempotent})
}

// PublishVolume publishes one attached, read-write volume of a running VM
// sandbox as the volume's new head and returns the checkpoint to wait on:
// WaitForVolumePublish. A publish is not retried once it may have reached
// the server (a second one would be another checkpoint).
func (c *Client) PublishVolume(ctx context.Context, sandboxID, name string) (*Checkpoint, error) {
	if err := ValidateVolumeRef(name); err != nil {
		return nil, err
	}
	p := sandboxPath(sandboxID) + "/volumes/" + url.PathEscape(name) + "/publish"
	var out Checkpoint
	if err := c.do(ctx, call{method: http.MethodPost, path: p, out: &out, retry: retryUnsent}); err != nil {
		return nil, err
	}
	if out.ID == "" {
		return nil, fmt.Errorf("POST %s: the answer has no checkpoint id", p)
	}
	return &out, nil
}

// WaitForVolumePublish waits until a publish's checkpoint is DURABLE and
// its merge is no longer pending: only then do new sandboxes see it.
func (c *Client) WaitForVolumePublish(ctx context.Context, checkpointID string, onProgress func(Checkpoint)) (*Checkpoint, error) {
	return c.WaitForCheckpoint(ctx, checkpointID, WaitCheckpointOptions{Merged: true, OnProgress: onProgress})
}

// VolumeMount attaches a volume to a sandbox at create. [I] The element's
// shape is not published; this is the CLI's --volume NAME:/mount/path[:ro]
// as an object, with read_only sent only when true.
type VolumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mount_path"`
	ReadOnly  bool   `json:"read_only,omitempty"`
}

// String is the CLI form, NAME:/mount/path[:ro].
func (m VolumeMount) String() string {
	s := m.Name + ":" + m.MountPath
	if m.ReadOnly {
		s += ":ro"
	}
	return s
}

// ParseVolumeMount reads the CLI form NAME:/mount/path[:ro] (":rw" is
// accepted as the default) and checks it.
func ParseVolumeMount(s string) (VolumeMount, error) {
	parts := strings.Split(s, ":")
	var m VolumeMount
	switch {
	case len(parts) == 2:
		m = VolumeMount{Name: parts[0], MountPath: parts[1]}
	case len(parts) == 3 && (parts[2] == "ro" || parts[2] == "rw"):
		m = VolumeMount{Name: parts[0], MountPath: parts[1], ReadOnly: parts[2] == "ro"}
	default:
		return VolumeMount{}, fmt.Errorf("%w: volume %q: use NAME:/mount/path or NAME:/mount/path:ro", ErrInvalidRequest, s)
	}
	if msg := volumeMountProblem(m); msg != "" {
		return VolumeMount{}, fmt.Errorf("%w: volume %q: %s", ErrInvalidRequest, s, msg)
	}
	return m, nil
}

// volumeMountProblem is what is wrong with one mount, or "".
func volumeMountProblem(m VolumeMount) string {
	switch {
	case !volumeRefPattern.MatchString(m.Name):
		return fmt.Sprintf("%q is not a volume name (or owner/name)", m.Name)
	case !strings.HasPrefix(m.MountPath, "/"):
		return fmt.Sprintf("the mount path %q must be absolute", m.MountPath)
	case path.Clean(m.MountPath) != m.MountPath || strings.ContainsRune(m.MountPath, 0):
		return fmt.Sprintf("the mount path %q must be clean (no trailing slash, no . or .. segments)", m.MountPath)
	case m.MountPath == "/":
		return "a volume cannot be mounted over the root file system"
	}
	return ""
}

// VolumeMountRules checks a create request's volumes: at most 8 [the
// CLI's limit], each a valid mount, no volume or mount path twice [I]. It
// returns one message per problem; the create rules and the provider's
// plan-time check of an attachment list both call it.
func VolumeMountRules(mounts []VolumeMount) []string {
	var out []string
	if len(mounts) > MaxVolumesPerSandbox {
		out = append(out, fmt.Sprintf("at most %d volumes per sandbox, got %d", MaxVolumesPerSandbox, len(mounts)))
	}
	names, paths := map[string]bool{}, map[string]bool{}
	for _, m := range mounts {
		if msg := volumeMountProblem(m); msg != "" {
			out = append(out, fmt.Sprintf("volume %s: %s", m, msg))
			continue
		}
		if names[m.Name] {
			out = append(out, fmt.Sprintf("volume %q is attached twice", m.Name))
		}
		if paths[m.MountPath] {
			out = append(out, fmt.Sprintf("two volumes are mounted at %s", m.MountPath))
		}
		names[m.Name], paths[m.MountPath] = true, true
	}
	return out
}
