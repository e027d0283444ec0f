package prime

// Images and their artifacts. A VM sandbox boots an image's VM artifact;
// an image pushed before VM images existed has none, and a VM create then
// fails with "VM image not found". POST /images/{name}/{tag}/vm-build
// converts the image's registry content into a VM artifact without
// rebuilding it; GET /images/build/{build_id} shows the build's progress.
// GET /images lists one row per artifact (and per active build), paged by
// logical image (owner/name:tag), so a page may hold more rows than its
// limit. Image bodies are camelCase (teamId, buildId, …).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Image build statuses (the SDK's enum).
const (
	ImageBuildPending   = "PENDING"
	ImageBuildUploading = "UPLOADING"
	ImageBuildBuilding  = "BUILDING"
	ImageBuildCompleted = "COMPLETED"
	ImageBuildFailed    = "FAILED"
	ImageBuildCancelled = "CANCELLED"
)

// ArtifactVM is the artifactType of a VM artifact.
const ArtifactVM = "VM_SANDBOX"

// IsTerminalImageBuildStatus reports whether a build will not progress.
func IsTerminalImageBuildStatus(s string) bool {
	switch strings.ToUpper(s) {
	case ImageBuildCompleted, ImageBuildFailed, ImageBuildCancelled:
		return true
	}
	return false
}

// ImageArtifactReady reports whether an artifact row's status means it can
// be used: COMPLETED, or the guide's display word "Ready" [I].
func ImageArtifactReady(status string) bool {
	s := strings.ToUpper(status)
	return s == ImageBuildCompleted || s == "READY"
}

// ImageListItem is one row of GET /images: an artifact of an image, or an
// active build.
type ImageListItem struct {
	ID            string     `json:"id"`
	ArtifactType  string     `json:"artifactType"`
	ImageName     string     `json:"imageName"`
	ImageTag      string     `json:"imageTag"`
	Status        string     `json:"status"`
	FullImagePath *string    `json:"fullImagePath"`
	ErrorMessage  *string    `json:"errorMessage"`
	SizeBytes     *int64     `json:"sizeBytes"`
	Visibility    string     `json:"visibility"`
	CreatedAt     time.Time  `json:"createdAt"`
	StartedAt     *time.Time `json:"startedAt"`
	CompletedAt   *time.Time `json:"completedAt"`
	PushedAt      *time.Time `json:"pushedAt"`
	TeamID        *string    `json:"teamId"`
	OwnerType     string     `json:"ownerType"`
	DisplayRef    *string    `json:"displayRef"`
}

// UnmarshalJSON reads timestamps with or without a zone.
func (it *ImageListItem) UnmarshalJSON(data []byte) error {
	type plain ImageListItem
	return decodeWithISOTimes(data, (*plain)(it))
}

// ImageListPage is one GET /images answer.
type ImageListPage struct {
	Data       []ImageListItem `json:"data"`
	TotalCount *int            `json:"totalCount"`
	Offset     int             `json:"offset"`
	Limit      int             `json:"limit"`
}

// ListImagesOptions are GET /images' query.
type ListImagesOptions struct {
	// TeamID lists the team's images (query teamId); empty: the configured
	// team, or the caller's personal images.
	TeamID string
	// Limit is the number of logical images per page (default 50).
	Limit int
}

// ListImages returns every row of the caller's (or team's) images, paging
// by logical image: the next offset is offset + limit whatever the number
// of rows, and paging stops at totalCount or at a page with fewer logical
// images than the limit.
func (c *Client) ListImages(ctx context.Context, o ListImagesOptions) ([]ImageListItem, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = 50
	}
	team := c.teamOr(o.TeamID)
	all := []ImageListItem{}
	for offset, pages := 0, 0; pages < maxListPages; pages++ {
		q := url.Values{"limit": {strconv.Itoa(limit)}, "offset": {strconv.Itoa(offset)}}
		if team != "" {
			q.Set("teamId", team)
		}
		var page ImageListPage
		if err := c.do(ctx, call{method: http.MethodGet, path: "/images", query: q, out: &page, retry: retryIdempotent}); err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		offset += limit
		logical := map[string]bool{}
		for _, it := range page.Data {
			logical[it.ImageName+":"+it.ImageTag] = true
		}
		switch {
		case len(page.Data) == 0:
			return all, nil
		case page.TotalCount != nil && offset >= *page.TotalCount:
			return all, nil
		case page.TotalCount == nil && len(logical) < limit:
			return all, nil
		}
	}
	return nil, fmt.Errorf("listing images: more than %d pages", maxListPages)
}

// ImageRef is an image reference as a create names it: [owner/]name:tag.
type ImageRef struct {
	Owner, Name, Tag string
}

// ParseImageRef reads [owner/]name[:tag] (the tag defaults to "latest").
// A registry host or a digest is not a Prime image reference.
func ParseImageRef(s string) (ImageRef, error) {
	if s == "" || strings.ContainsAny(s, "@ \t") {
		return ImageRef{}, fmt.Errorf("%w: image %q is not [owner/]name:tag", ErrInvalidRequest, s)
	}
	var r ImageRef
	rest := s
	if i := strings.LastIndex(rest, "/"); i >= 0 {
		r.Owner, rest = rest[:i], rest[i+1:]
		if r.Owner == "" || strings.Contains(r.Owner, "/") {
			return ImageRef{}, fmt.Errorf("%w: image %q is not [owner/]name:tag", ErrInvalidRequest, s)
		}
	}
	r.Name, r.Tag = rest, "latest"
	if i := strings.LastIndex(rest, ":"); i >= 0 {
		r.Name, r.Tag = rest[:i], rest[i+1:]
	}
	if r.Name == "" || r.Tag == "" {
		return ImageRef{}, fmt.Errorf("%w: image %q is not [owner/]name:tag", ErrInvalidRequest, s)
	}
	return r, nil
}

// Artifacts returns the rows of items that are artifacts or builds of the
// image name:tag.
func Artifacts(items []ImageListItem, name, tag string) []ImageListItem {
	var out []ImageListItem
	for _, it := range items {
		if it.ImageName == name && it.ImageTag == tag {
			out = append(out, it)
		}
	}
	return out
}

// VMArtifact returns the image's VM artifact row (a ready one first), if
// the list has one.
func VMArtifact(items []ImageListItem, name, tag string) (ImageListItem, bool) {
	var found *ImageListItem
	for _, it := range Artifacts(items, name, tag) {
		if it.ArtifactType != ArtifactVM {
			continue
		}
		if ImageArtifactReady(it.Status) {
			return it, true
		}
		if found == nil {
			found = &it
		}
	}
	if found == nil {
		return ImageListItem{}, false
	}
	return *found, true
}

// VMBuildRequest is the vm-build body: both keys may be null.
type VMBuildRequest struct {
	TeamID     *string `json:"teamId"`
	OwnerScope *string `json:"ownerScope"`
}

// VMBuildResponse is the vm-build answer (all keys required).
type VMBuildResponse struct {
	Success         bool   `json:"success"`
	Message         string `json:"message"`
	BuildID         string `json:"buildId"`
	ArtifactBuildID string `json:"artifactBuildId"`
}

// RequestVMBuild asks the platform to add a VM artifact to the image
// name:tag (linux/amd64 images; team images only by their creator or a
// team admin). The configured team is sent when req names none. The answer's
// BuildID is what WaitForImageBuild polls. Not retried once it may have
// reached the server.
func (c *Client) RequestVMBuild(ctx context.Context, name, tag string, req VMBuildRequest) (*VMBuildResponse, error) {
	if name == "" || tag == "" || strings.ContainsAny(name+tag, "/:") {
		return nil, fmt.Errorf("%w: vm-build needs an image name and tag (without owner), got %q:%q", ErrInvalidRequest, name, tag)
	}
	if req.TeamID == nil && c.cfg.TeamID != nil && *c.cfg.TeamID != "" {
		team := *c.cfg.TeamID
		req.TeamID = &team
	}
	p := "/images/" + url.PathEscape(name) + "/" + url.PathEscape(tag) + "/vm-build"
	var out VMBuildResponse
	if err := c.do(ctx, call{method: http.MethodPost, path: p, body: req, out: &out, retry: retryUnsent}); err != nil {
		return nil, err
	}
	if !out.Success || out.BuildID == "" {
		return nil, fmt.Errorf("POST %s: the platform did not start a VM build: %s", p, orDefault(out.Message, "no build id in the answer"))
	}
	return &out, nil
}

// ImageBuild is a build's progress [I: GET /images/build/{build_id}'s
// schema is not published; the id is read from id, build_id or buildId].
type ImageBuild struct {
	ID           string
	Status       string
	ErrorMessage *string
	ImageName    string
	ImageTag     string
}

// UnmarshalJSON reads either casing of the keys.
func (b *ImageBuild) UnmarshalJSON(data []byte) error {
	var aux struct {
		ID          string  `json:"id"`
		SnakeID     string  `json:"build_id"`
		CamelID     string  `json:"buildId"`
		Status      string  `json:"status"`
		Error       *string `json:"errorMessage"`
		SnakeError  *string `json:"error_message"`
		ImageName   string  `json:"imageName"`
		SnakeName   string  `json:"image_name"`
		ImageTag    string  `json:"imageTag"`
		SnakeTag    string  `json:"image_tag"`
		ErrorString *string `json:"error"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*b = ImageBuild{
		ID: orDefault(aux.ID, orDefault(aux.CamelID, aux.SnakeID)), Status: aux.Status,
		ImageName: orDefault(aux.ImageName, aux.SnakeName), ImageTag: orDefault(aux.ImageTag, aux.SnakeTag),
	}
	for _, e := range []*string{aux.Error, aux.SnakeError, aux.ErrorString} {
		if e != nil && *e != "" {
			b.ErrorMessage = e
			break
		}
	}
	if b.Status == "" {
		return errors.New("image build answer lacks status")
	}
	return nil
}

// GetImageBuild reads a build's progress. Unknown wraps ErrNotFound.
func (c *Client) GetImageBuild(ctx context.Context, buildID string) (*ImageBuild, error) {
	var out ImageBuild
	if err := c.do(ctx, call{method: http.MethodGet, path: "/images/build/" + url.PathEscape(buildID), out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	if out.ID == "" {
		out.ID = buildID
	}
	return &out, nil
}

// ImageBuildFailedError reports a build that FAILED or was CANCELLED.
type ImageBuildFailedError struct {
	BuildID, Status, Message string
}

func (e *ImageBuildFailedError) Error() string {
	msg := fmt.Sprintf("image build %s is %s", e.BuildID, e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// DefaultImageBuildBackoff paces WaitForImageBuild: from 1 s up to the
// SDK's own image-build poll interval.
var DefaultImageBuildBackoff = Backoff{Initial: time.Second, Factor: 1.5, Max: DefaultImageBuildPoll, Jitter: 0.2}

// WaitImageBuildOptions tune WaitForImageBuild.
type WaitImageBuildOptions struct {
	// Schedule paces the checks (default DefaultImageBuildBackoff).
	Schedule Schedule
	// OnProgress is called when the status changes; optional.
	OnProgress func(ImageBuild)
}

// WaitForImageBuild polls a build (the first check at once) until it
// COMPLETED, failing with an *ImageBuildFailedError on FAILED or CANCELLED.
// ctx carries the deadline; when it ends first the error names the last
// status.
func (c *Client) WaitForImageBuild(ctx context.Context, buildID string, o WaitImageBuildOptions) (*ImageBuild, error) {
	sched := o.Schedule
	if sched == nil {
		sched = DefaultImageBuildBackoff
	}
	var last *ImageBuild
	check := func(ctx context.Context) (bool, error) {
		b, err := c.GetImageBuild(ctx, buildID)
		if err != nil {
			return false, err
		}
		if (last == nil || last.Status != b.Status) && o.OnProgress != nil {
			o.OnProgress(*b)
		}
		last = b
		switch strings.ToUpper(b.Status) {
		case ImageBuildCompleted:
			return true, nil
		case ImageBuildFailed, ImageBuildCancelled:
			return false, &ImageBuildFailedError{BuildID: buildID, Status: b.Status, Message: deref(b.ErrorMessage)}
		}
		return false, nil
	}
	done, err := check(ctx)
	if err == nil && !done {
		err = Poll(ctx, sched, check)
	}
	switch {
	case err == nil:
		return last, nil
	case ctx.Err() != nil && last != nil:
		return nil, fmt.Errorf("image build %s was still %s when the wait ended: %w", buildID, last.Status, err)
	}
	return nil, err
}
