// Package image holds the image readiness domain: whether an image can boot
// a VM sandbox, and converting one that cannot.
//
// A VM sandbox boots an image's VM artifact; an image pushed before VM
// images existed has none, and every create from it fails with "VM image
// not found". This package lets a configuration find that out at plan
// time, before a fleet creates anything, and fix it declaratively.
//
// It owns:
//
//   - the artifact attributes and their conversion from the image list
//     (model.go), and the reference rules (name and tag, or
//     [owner/]name:tag);
//   - the prime_image data source (data_source.go): an image's artifacts,
//     their status, and `vm_ready`, for a `lifecycle.precondition`;
//   - prime_image_vm_build (vm_build_resource.go): request the vm-build and
//     wait until it has completed.
//
// The image calls themselves (list, vm-build, build progress and its wait)
// live in internal/prime.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/tfkit, internal/prime.
//
// internal/provider imports it, never the reverse. It reads the configured
// client only through tfkit.ClientFrom.
package image
