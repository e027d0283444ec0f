package acctest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// StateID returns the ID of a resource in state.
func StateID(s *terraform.State, addr string) (string, error) {
	rs, ok := s.RootModule().Resources[addr]
	if !ok {
		return "", fmt.Errorf("%s not in state", addr)
	}
	return rs.Primary.ID, nil
}

// ExpectErr compiles a regexp that matches s across line breaks: Terraform
// wraps long diagnostics.
func ExpectErr(s string) *regexp.Regexp {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(words, `\s+`))
}
