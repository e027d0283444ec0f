package provider

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// The README's feature table names every type the provider serves —
// resources, data sources, list resources, actions, ephemeral resources —
// so a reader sees all of it, and with the Terraform it needs.
func TestReadmeFeatureTableNamesEveryType(t *testing.T) {
	ctx := context.Background()
	p := &primeProvider{}
	var names []string
	for _, f := range p.Resources(ctx) {
		var resp resource.MetadataResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "prime"}, &resp)
		names = append(names, resp.TypeName)
	}
	for _, f := range p.DataSources(ctx) {
		var resp datasource.MetadataResponse
		f().Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "prime"}, &resp)
		names = append(names, resp.TypeName)
	}
	for _, f := range p.ListResources(ctx) {
		var resp resource.MetadataResponse
		f().(interface {
			Metadata(context.Context, resource.MetadataRequest, *resource.MetadataResponse)
		}).Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "prime"}, &resp)
		names = append(names, resp.TypeName)
	}
	for _, f := range p.Actions(ctx) {
		var resp action.MetadataResponse
		f().Metadata(ctx, action.MetadataRequest{ProviderTypeName: "prime"}, &resp)
		names = append(names, resp.TypeName)
	}
	for _, f := range p.EphemeralResources(ctx) {
		var resp ephemeral.MetadataResponse
		f().Metadata(ctx, ephemeral.MetadataRequest{ProviderTypeName: "prime"}, &resp)
		names = append(names, resp.TypeName)
	}
	_ = list.ListResource(nil)

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "## Features and the Terraform version each needs")
	end := strings.Index(text[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README.md has no section \"Features and the Terraform version each needs\"")
	}
	table := text[start : start+1+end]
	for _, name := range names {
		if !strings.Contains(table, "`"+name+"`") {
			t.Errorf("the README's feature table does not name %s", name)
		}
	}
	if len(names) < 25 {
		t.Errorf("only %d types found: %v", len(names), names)
	}
}
